-- Correct an admitted entry to the tokens the provider counted, and move its time to
-- now (the provider saw the request somewhere between admission and now, so the
-- later time is the safe one). A no-op when the entry already left the window.
-- KEYS[1] window zset, KEYS[2] tokens hash, KEYS[3] the window's running sum (hash;
-- include/rl_window.lua, with the tenants' sums); ARGV[1] entry id, ARGV[2] tokens,
-- ARGV[3] window ms.
-- include: rl_window
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local window = tonumber(ARGV[3])
local st = rl_window(KEYS[1], KEYS[2], KEYS[3], now, window + 1000)
local before = tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
st.sum = st.sum + (tonumber(ARGV[2]) or 0) - before
rl_tenant_add(st, rl_tenant_of(ARGV[1]), 0, (tonumber(ARGV[2]) or 0) - before)
rl_written(st)
rl_save(st)
return 1
