-- Correct an admitted entry to the tokens the provider counted, and move its time to
-- now (the provider saw the request somewhere between admission and now, so the
-- later time is the safe one). A no-op when the entry already left the window.
-- KEYS[1] window zset, KEYS[2] tokens hash; ARGV[1] entry id, ARGV[2] tokens, ARGV[3] window ms.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local window = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], window + 1000)
redis.call('PEXPIRE', KEYS[2], window + 1000)
return 1
