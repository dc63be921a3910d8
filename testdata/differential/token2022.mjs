// Token-2022 extension instructions and layouts (filled in with the
// extensions ferry implements).

export const EXT = {};
export const ext = {};
