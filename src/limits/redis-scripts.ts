// The Lua scripts of the Redis rate limiter: the same sliding log as in-process-limiter.ts, run inside
// Redis so that every gateway sees one log per key and each decision is atomic (a script runs alone).
// Time is the Redis server's TIME, never a gateway's clock: gateways whose clocks disagree still agree.
//
// Per key, four keys sharing one hash tag (one cluster slot), all with PEXPIRE so an idle key vanishes:
//   KEYS[1] log     sorted set  member → admitted at (ms)           rpm = its size
//   KEYS[2] tokens  hash        member → tokens (estimate, then actual)
//   KEYS[3] sum     string      the sum of KEYS[2]                  tpm = its value
//   KEYS[4] flight  sorted set  member → slot expiry (ms)           max_concurrent = its size
// A member is `<request id>#<sequence>`: unique per admission, and still readable as its request.
// Limits arrive as numbers, -1 for none. Replies are arrays of integers (see the decoders in redis-limiter.ts).

const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Removes admissions that have left the window (admitted at or before now - window), in batches small
-- enough for unpack(), and takes their tokens off the sum. Returns the count and the sum of what is left.
local function prune(window)
  local cutoff = now - window
  local removed = 0
  while true do
    local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff, 'LIMIT', 0, 200)
    if #gone == 0 then break end
    local counts = redis.call('HMGET', KEYS[2], unpack(gone))
    for i = 1, #counts do removed = removed + (tonumber(counts[i]) or 0) end
    redis.call('HDEL', KEYS[2], unpack(gone))
    redis.call('ZREM', KEYS[1], unpack(gone))
    if #gone < 200 then break end
  end
  local count = redis.call('ZCARD', KEYS[1])
  if count == 0 then
    redis.call('DEL', KEYS[2], KEYS[3])
    return 0, 0
  end
  if removed > 0 then return count, redis.call('DECRBY', KEYS[3], removed) end
  return count, tonumber(redis.call('GET', KEYS[3]) or '0')
end

-- Until the newest admission leaves the window (0 when the log is empty).
local function reset_ms(window)
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if #newest == 0 then return 0 end
  return math.max(0, tonumber(newest[2]) + window - now)
end
`;

/**
 * ARGV: member, rpm, tpm, max_concurrent, tokens, window ms, slot TTL ms, concurrency retry ms.
 * Reply: {admitted 0|1, refused by (0 none, 1 rpm, 2 tpm, 3 max_concurrent), retry ms, never fits 0|1,
 * requests in the window, tokens in the window, reset ms} — counts after the admission when admitted.
 */
export const ADMIT_SCRIPT = `${PRELUDE}
local id = ARGV[1]
local rpm, tpm, mc = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tokens, window, ttl, mc_retry = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local logged = rpm >= 0 or tpm >= 0

local count, sum = 0, 0
if logged then count, sum = prune(window) end

-- Every limit is checked before anything is counted; the refusal names the longest wait.
local refused, wait, never = 0, 0, 0
if rpm >= 0 and count >= rpm then
  refused = 1
  if rpm == 0 then
    wait, never = window, 1
  else
    local leaving = redis.call('ZRANGE', KEYS[1], count - rpm, count - rpm, 'WITHSCORES')
    wait = tonumber(leaving[2]) + window - now
  end
end
if never == 0 and tpm >= 0 and sum + tokens > tpm then
  if tokens > tpm then
    refused, wait, never = 2, window, 1
  else
    -- Walk from the oldest admission until enough tokens have left for this request to fit.
    local left, at, i = sum, nil, 0
    while at == nil do
      local batch = redis.call('ZRANGE', KEYS[1], i, i + 63, 'WITHSCORES')
      if #batch == 0 then break end
      local ids = {}
      for j = 1, #batch, 2 do ids[#ids + 1] = batch[j] end
      local counts = redis.call('HMGET', KEYS[2], unpack(ids))
      for j = 1, #ids do
        left = left - (tonumber(counts[j]) or 0)
        if left + tokens <= tpm then at = tonumber(batch[j * 2]); break end
      end
      i = i + 64
    end
    local tokens_wait = (at or now) + window - now
    if refused == 0 or tokens_wait > wait then refused, wait = 2, tokens_wait end
  end
end
if never == 0 and mc >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  if redis.call('ZCARD', KEYS[4]) >= mc then
    if mc == 0 then
      refused, wait, never = 3, window, 1
    elseif refused == 0 or mc_retry > wait then
      refused, wait = 3, mc_retry
    end
  end
end
if refused ~= 0 then
  return {0, refused, wait, never, count, sum, reset_ms(window)}
end

if logged then
  -- Tokens count only under tpm (an admission counts in the limits in force when it was admitted).
  local counted = tpm >= 0 and tokens or 0
  redis.call('ZADD', KEYS[1], now, id)
  redis.call('HSET', KEYS[2], id, counted)
  sum = redis.call('INCRBY', KEYS[3], counted)
  count = count + 1
  redis.call('PEXPIRE', KEYS[1], window)
  redis.call('PEXPIRE', KEYS[2], window)
  redis.call('PEXPIRE', KEYS[3], window)
end
if mc >= 0 then
  redis.call('ZADD', KEYS[4], now + ttl, id)
  redis.call('PEXPIRE', KEYS[4], ttl)
end
return {1, 0, 0, 0, count, sum, logged and window or 0}
`;

/**
 * ARGV: member, operation ('finish' | 'cancel' | 'renew'), actual tokens (-1: not counted), window
 * ms, slot TTL ms. finish: the admission's tokens become the actual count if it is still in the window
 * and was admitted under tpm; its slot frees.
 * cancel: the admission leaves the log and the sum if it is still in the window; its slot frees.
 * renew: a live slot's expiry moves on (an expired one stays expired). Nothing is pruned here: an
 * admission already out of the window is left alone, and the next admission's prune takes it away.
 */
export const END_SCRIPT = `${PRELUDE}
local id, op = ARGV[1], ARGV[2]
local actual, window, ttl = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if op == 'renew' then
  local expiry = redis.call('ZSCORE', KEYS[4], id)
  if expiry and tonumber(expiry) > now then
    redis.call('ZADD', KEYS[4], now + ttl, id)
    redis.call('PEXPIRE', KEYS[4], ttl)
  end
  return 0
end
redis.call('ZREM', KEYS[4], id)
local at = redis.call('ZSCORE', KEYS[1], id)
if not at or tonumber(at) <= now - window then return 0 end
local counted = tonumber(redis.call('HGET', KEYS[2], id) or '0')
if op == 'finish' then
  if actual < 0 then return 0 end
  redis.call('HSET', KEYS[2], id, actual)
  redis.call('INCRBY', KEYS[3], actual - counted)
else
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('DECRBY', KEYS[3], counted)
end
return 1
`;

/** ARGV: window ms. Reply: {requests in the window, tokens in the window, reset ms}. */
export const PEEK_SCRIPT = `${PRELUDE}
local window = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0, 0} end
local count, sum = prune(window)
return {count, sum, reset_ms(window)}
`;
