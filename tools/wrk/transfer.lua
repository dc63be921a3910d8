-- wrk script for POST /v1/spl/transfer against a running `ferry serve`.
-- The mint and wallets come from the serve banner; VISIBILITY picks the build:
--   MINT=... FROM=... TO=... VISIBILITY=private \
--     wrk -t1 -c64 -d10s --latency -s tools/wrk/transfer.lua http://127.0.0.1:8080/v1/spl/transfer
local function need(name)
  local v = os.getenv(name)
  if v == nil or v == "" then
    error(name .. " is not set (see the comment at the top of transfer.lua)")
  end
  return v
end

local visibility = os.getenv("VISIBILITY") or "public"

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = string.format(
  '{"from":"%s","to":"%s","mint":"%s","amount":1000,"visibility":"%s","fromBalance":"base","toBalance":"base"}',
  need("FROM"), need("TO"), need("MINT"), visibility)

local bad = 0
function response(status, headers, body)
  if status ~= 200 and bad < 3 then
    bad = bad + 1
    io.stderr:write("status " .. status .. ": " .. body .. "\n")
  end
end
