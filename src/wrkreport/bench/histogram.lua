-- wrk done() hook: write wrk's full latency histogram to the file named by
-- $WRKREPORT_HIST_FILE (docs/raw-format.md, "*.hist.json"), so that percentiles at any p,
-- and clients merged exactly, can be computed later. Run as `wrk -s histogram.lua ...`.
--
-- The path comes from the environment, never from the command line a shell would read.
-- Without the variable the script writes nothing. It prints nothing, so wrk's text
-- output stays the same. Values are wrk's, in microseconds, after wrk's own correction
-- for coordinated omission: the histogram the printed percentiles come from.

local FORMAT = "wrkreport-latency-histogram"
local VERSION = 1

-- wrk's own percentiles, kept beside the histogram as a cross-check of the reader.
local CHECK_PERCENTILES = { 50, 75, 90, 99, 99.9, 99.99 }

local function integer(x)
   return string.format("%d", x)
end

local function number(x)
   if x ~= x or x == math.huge or x == -math.huge then
      return "null"
   end
   return string.format("%.17g", x)
end

-- The fast path: wrk passes done() its `stats` struct (wrk 4.x src/stats.h) in a userdata
-- holding a pointer to it; with LuaJIT's FFI one pass over data[min..max] reads every
-- value/count pair in O(max - min). It is used only when what it read agrees with wrk's
-- own API: same min, max and number of distinct values, counts adding up to the struct's
-- count, and the same first and last pair as latency(1) and latency(#latency).
local STATS_CDEF = [[
typedef struct {
   uint64_t count;
   uint64_t limit;
   uint64_t min;
   uint64_t max;
   uint64_t data[];
} wrkreport_stats;
]]

local function ffi_pairs(latency, distinct)
   local ok, ffi = pcall(require, "ffi")
   if not ok then
      return nil
   end
   if not pcall(ffi.cdef, STATS_CDEF) then
      return nil
   end
   local s = ffi.cast("wrkreport_stats **", latency)[0]
   local low, high, limit = tonumber(s.min), tonumber(s.max), tonumber(s.limit)
   if low ~= latency.min or high ~= latency.max or high >= limit then
      return nil
   end
   local out, n, total = {}, 0, 0
   for v = low, high do
      local count = tonumber(s.data[v])
      if count ~= 0 then
         n = n + 1
         total = total + count
         out[n] = { v, count }
      end
   end
   if n ~= distinct or total ~= tonumber(s.count) then
      return nil
   end
   local first_value, first_count = latency(1)
   local last_value, last_count = latency(n)
   if out[1][1] ~= first_value or out[1][2] ~= first_count
      or out[n][1] ~= last_value or out[n][2] ~= last_count then
      return nil
   end
   return out
end

-- The slow path, wrk's documented API: latency(i) is the i-th distinct value and its
-- count. wrk's stats_value_at scans from min for every i, so this loop is quadratic:
-- about 0.5 s of CPU for a 1-second measurement with 12,000 distinct values.
local function api_pairs(latency, distinct)
   local out = {}
   for i = 1, distinct do
      local value, count = latency(i)
      out[i] = { value, count }
   end
   return out
end

local function histogram_text(found)
   local out = {}
   for i, pair in ipairs(found) do
      out[i] = "[" .. integer(pair[1]) .. "," .. integer(pair[2]) .. "]"
   end
   return table.concat(out, ",")
end

local function percentiles(latency, distinct)
   local out = {}
   if distinct == 0 then
      return "{}"
   end
   for i, p in ipairs(CHECK_PERCENTILES) do
      out[i] = "\"" .. tostring(p) .. "\":" .. integer(latency:percentile(p))
   end
   return "{" .. table.concat(out, ",") .. "}"
end

local function write_histogram(path, summary, latency)
   local clock = os.clock()
   local errors = summary.errors
   local distinct = #latency
   local found, method = {}, "none" -- nothing recorded
   if distinct > 0 then
      found, method = ffi_pairs(latency, distinct), "ffi"
      if found == nil then
         found, method = api_pairs(latency, distinct), "latency(i)"
      end
   end
   local low, high = "null", "null"
   if distinct > 0 then
      low, high = integer(latency.min), integer(latency.max)
   end
   local parts = {
      "{\"format\":\"" .. FORMAT .. "\"",
      "\"version\":" .. VERSION,
      "\"unit\":\"us\"",
      "\"duration_us\":" .. integer(summary.duration),
      "\"requests\":" .. integer(summary.requests),
      "\"bytes\":" .. integer(summary.bytes),
      "\"errors\":{\"connect\":" .. integer(errors.connect) .. ",\"read\":" .. integer(errors.read)
         .. ",\"write\":" .. integer(errors.write) .. ",\"status\":" .. integer(errors.status)
         .. ",\"timeout\":" .. integer(errors.timeout) .. "}",
      "\"latency\":{\"min\":" .. low .. ",\"max\":" .. high
         .. ",\"mean\":" .. number(latency.mean) .. ",\"stdev\":" .. number(latency.stdev)
         .. ",\"distinct\":" .. integer(distinct) .. "}",
      "\"percentiles\":" .. percentiles(latency, distinct),
      "\"read_by\":\"" .. method .. "\"",
      "\"done_us\":" .. integer((os.clock() - clock) * 1e6),
      "\"histogram\":[" .. histogram_text(found) .. "]}\n",
   }
   local file, why = io.open(path, "w")
   if file == nil then
      error("cannot write " .. tostring(why), 0)
   end
   file:write(table.concat(parts, ","))
   file:close()
end

-- wrk calls done() unprotected after printing its results: an error here would abort wrk
-- before its buffered output is flushed, so every error is caught and reported on stderr
-- (which the driver appends to the .wrk.txt) and the measurement keeps its text.
function done(summary, latency, requests)
   local path = os.getenv("WRKREPORT_HIST_FILE")
   if path == nil or path == "" then
      return
   end
   local ok, err = pcall(write_histogram, path, summary, latency)
   if not ok then
      io.stderr:write("histogram.lua: no latency histogram: " .. tostring(err) .. "\n")
   end
end
