import { createLruHotCache } from '../../src/store/drivers/hot-lru.js';
import { hotCacheContract } from './hot-cache.contract.js';

hotCacheContract('lru', async () => {
  // An injected clock: expiry is tested without waiting.
  let nowMs = Date.UTC(2025, 0, 1);
  return {
    cache: createLruHotCache({ now: () => nowMs }),
    advance: async (ms) => {
      nowMs += ms;
    },
  };
});
