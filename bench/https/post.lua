-- wrk script: POST the AdmissionReview in $JG_BODY to the URL over keep-alive connections.
-- Optional checks (they cost the client a Lua call per response, so the throughput runs leave
-- them off):
--   JG_CHECK_EVERY=N  every Nth response body must contain "allowed":true
--   JG_STOP_AFTER=N   stop after N responses and end wrk early (run with -t1 for an exact count;
--                     give -d as an upper bound)
-- done() prints one line per thread:
--   JG_COUNTS responses=R non200=S checked=C wrong_verdict=W
local path = os.getenv("JG_BODY") or error("JG_BODY is not set")
local f = assert(io.open(path, "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

local every = tonumber(os.getenv("JG_CHECK_EVERY") or "0")
local stop_after = tonumber(os.getenv("JG_STOP_AFTER") or "0")

responses, non200, checked, wrong_verdict = 0, 0, 0, 0

if every > 0 or stop_after > 0 then
   function response(status, headers, body)
      responses = responses + 1
      if status ~= 200 then non200 = non200 + 1 end
      if every > 0 and responses % every == 0 then
         checked = checked + 1
         if not (body and body:find('"allowed":true', 1, true)) then
            wrong_verdict = wrong_verdict + 1
         end
      end
      if stop_after > 0 and responses == stop_after then
         -- wrk's main thread sleeps for -d whatever the threads do; SIGINT ends that sleep
         -- (wrk then prints its summary as usual). $PPID is wrk; the kill is sent from the
         -- background because system() ignores SIGINT in wrk while the shell runs.
         wrk.thread:stop()
         os.execute("(sleep 0.2; kill -INT $PPID) &")
      end
   end
end

local threads = {}
function setup(thread) table.insert(threads, thread) end

function done(summary, latency, requests)
   for _, t in ipairs(threads) do
      io.write(string.format("JG_COUNTS responses=%d non200=%d checked=%d wrong_verdict=%d\n",
         t:get("responses"), t:get("non200"), t:get("checked"), t:get("wrong_verdict")))
   end
end
