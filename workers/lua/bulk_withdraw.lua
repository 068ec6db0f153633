-- Take a canceled job off the bulk-lane request it is parked on, and withdraw the
-- request once no job waits on it: a pending request leaves its model's pending set
-- and is deleted, so it is never sent. A request a provider batch carries (or a claim
-- is creating one for) cannot be taken out of it: it is reported orphaned, and the
-- coordinator cancels a provider batch whose requests are all orphaned and withdraws
-- an orphan its batch ended without answering.
-- KEYS[1] request hash, KEYS[2] its waiters set, KEYS[3] the model's pending zset,
-- KEYS[4] the job's parked record.
-- ARGV[1] digest, ARGV[2] job id ("": no job, the request alone), ARGV[3] "submitted"
-- to withdraw an orphan in a provider batch too (the batch ended without its answer).
-- Returns {outcome, reservation, reservation_usd, provider batch}, outcome one of
-- "moved" (the job is not parked on this request: nothing changed), "resolved" (the
-- request was answered, failed or is gone: the job's record is deleted, so it is not
-- published again), "shared" (another job still waits on it), "withdrawn" (deleted:
-- its reservations are the caller's to release), "orphaned" (no job waits on it, but
-- a provider batch may carry it).
if ARGV[2] ~= '' then
  if redis.call('HGET', KEYS[4], 'digest') ~= ARGV[1] then
    return {'moved', '', '', ''}
  end
  redis.call('SREM', KEYS[2], ARGV[2])
  redis.call('DEL', KEYS[4])
end
local fields = redis.call('HMGET', KEYS[1], 'state', 'reservation', 'reservation_usd', 'batch')
local state = fields[1]
if state ~= 'pending' and state ~= 'submitting' and state ~= 'submitted' then
  return {'resolved', '', '', ''}
end
if redis.call('SCARD', KEYS[2]) > 0 then
  return {'shared', '', '', ''}
end
if state == 'pending' or (state == 'submitted' and ARGV[3] == 'submitted') then
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('DEL', KEYS[1], KEYS[2])
  return {'withdrawn', fields[2] or '', fields[3] or '', ''}
end
return {'orphaned', '', '', fields[4] or ''}
