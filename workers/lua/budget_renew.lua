-- Extend a reservation's lease from now, on every scope that still holds it.
-- KEYS[1] reservation hash, KEYS[2..n+1] its scope hashes, KEYS[n+2..2n+1] their lease
-- sorted sets; ARGV[1] lease ms, ARGV[2] reservation id.
-- Returns 1 when every scope still held it, 0 when it is finished or some scope has
-- already swept its expired lease (those tokens are back in that budget).
if redis.call('HGET', KEYS[1], 'state') ~= 'reserved' then
  return 0
end
local lease_ms = tonumber(ARGV[1])
local id = ARGV[2]
local n = (#KEYS - 1) / 2
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + lease_ms
local all_held = 1
for i = 2, n + 1 do
  if redis.call('HEXISTS', KEYS[i], 'r:' .. id) == 1 then
    redis.call('ZADD', KEYS[i + n], 'XX', deadline, id)
  else
    all_held = 0
  end
end
redis.call('HSET', KEYS[1], 'lease_until_ms', deadline)
return all_held
