-- A scope's budget as it stands once expired leases are given back (the same sweep
-- budget_reserve.lua runs first), so a read never counts a dead worker's tokens.
-- KEYS[1] scope hash, KEYS[2] its lease sorted set.
-- Returns {limit or nil, spent, reserved}.
local scope, leases = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
if #expired > 0 then
  local freed = 0
  for _, rid in ipairs(expired) do
    local held = tonumber(redis.call('HGET', scope, 'r:' .. rid))
    if held then
      freed = freed + held
      redis.call('HDEL', scope, 'r:' .. rid)
    end
  end
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  if freed > 0 and redis.call('HINCRBY', scope, 'reserved', -freed) < 0 then
    redis.call('HSET', scope, 'reserved', 0)
  end
end
return redis.call('HMGET', scope, 'limit', 'spent', 'reserved')
