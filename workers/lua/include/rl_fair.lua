-- The calls waiting in place for one provider:model, by tenant, so that its limit is
-- shared between the tenants that have work waiting (included by rl_acquire, after
-- rl_window; workers/rate_limiter.py). Keys: wq, a sorted set of the waiting calls,
-- `<entry id>|<tokens>` scored by the ms by which the call must have asked again; wp, a
-- hash per waiting tenant: `n:<tenant>` calls, `k:<tenant>` their tokens, `w:<tenant>`
-- its weight. A call refused with a wait it sleeps in place registers (a refusal of the
-- same call again moves its time on); it leaves when it is admitted, and is forgotten
-- once its time has passed without it asking (its worker died, or gave the job back).
-- Both keys expire together, when the last registration would.

local function fair_forget(wp, members)
  local gone = {}
  for _, member in ipairs(members) do
    local id, tokens = string.match(member, '^(.*)|(%d+)$')
    local tenant = rl_tenant_of(id or member)
    local g = gone[tenant] or {n = 0, k = 0}
    g.n, g.k = g.n + 1, g.k + (tonumber(tokens) or 0)
    gone[tenant] = g
  end
  for tenant, g in pairs(gone) do
    if redis.call('HINCRBY', wp, 'n:' .. tenant, -g.n) <= 0 then
      redis.call('HDEL', wp, 'n:' .. tenant, 'k:' .. tenant, 'w:' .. tenant)
    else
      redis.call('HINCRBY', wp, 'k:' .. tenant, -g.k)
    end
  end
end

-- The tenants waiting now, tenant -> {n, k, w}, once the stale registrations are forgotten.
local function fair_waiting(wq, wp, now)
  local stale = redis.call('ZRANGEBYSCORE', wq, '-inf', now)
  if #stale > 0 then
    fair_forget(wp, stale)
    redis.call('ZREMRANGEBYSCORE', wq, '-inf', now)
  end
  local raw = redis.call('HGETALL', wp)
  local waiting = {}
  for i = 1, #raw, 2 do
    local kind, tenant = string.match(raw[i], '^([nkw]):(.*)$')
    if kind then
      local p = waiting[tenant] or {n = 0, k = 0, w = 1}
      p[kind] = tonumber(raw[i + 1]) or 0
      waiting[tenant] = p
    end
  end
  for tenant, p in pairs(waiting) do
    if p.n <= 0 or p.w <= 0 then
      waiting[tenant] = nil
    end
  end
  return waiting
end

local function fair_register(wq, wp, member, tenant, tokens, weight, until_ms)
  if redis.call('ZADD', wq, until_ms, member) == 1 then
    redis.call('HINCRBY', wp, 'n:' .. tenant, 1)
    redis.call('HINCRBY', wp, 'k:' .. tenant, tokens)
  end
  redis.call('HSET', wp, 'w:' .. tenant, weight)
  local last = redis.call('ZRANGE', wq, -1, -1, 'WITHSCORES')
  local expire_at = math.ceil(tonumber(last[2])) + 1000
  redis.call('PEXPIREAT', wq, expire_at)
  redis.call('PEXPIREAT', wp, expire_at)
end

local function fair_leave(wq, wp, member)
  if redis.call('ZREM', wq, member) == 1 then
    fair_forget(wp, {member})
  end
end

-- ms until the first waiting call asks again (at least 1).
local function fair_next_ask(wq, now, grace)
  local first = redis.call('ZRANGE', wq, 0, 0, 'WITHSCORES')
  if #first == 0 then
    return 1
  end
  return math.max(1, tonumber(first[2]) - grace - now)
end
