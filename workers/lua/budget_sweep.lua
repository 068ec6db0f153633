-- A scope's budget as it stands once expired leases are given back (the same sweep
-- budget_reserve.lua runs first), so a read never counts a dead worker's tokens.
-- KEYS[1] scope hash, KEYS[2] its lease sorted set.
-- Returns {limit or nil, spent, reserved}.
-- include: lease_sweep
local scope, leases = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
give_back_expired_leases(scope, leases, now)
return redis.call('HMGET', scope, 'limit', 'spent', 'reserved')
