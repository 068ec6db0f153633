-- Give back the tokens of a scope's reservations whose lease ran out (their worker
-- died mid-call: nobody else would ever release them). Included by the budget scripts
-- that read or reserve (workers/lua_scripts.source expands `-- include: NAME`).
local function give_back_expired_leases(scope, leases, now)
  local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
  if #expired == 0 then
    return
  end
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
