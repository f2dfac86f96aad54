import Client from 'undici/lib/dispatcher/client.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import buildConnector from 'undici/lib/core/connect.js';
import errors from 'undici/lib/core/errors.js';

/**
 * The parts of undici mpprov uses, imported one by one instead of through its index. The index
 * loads all of undici (fetch, WebSocket, EventSource, cookies, caches, mocks) and its cookies
 * module reads `globalThis.Headers`, which makes Node load and run its own built-in copy of undici
 * as well: together a third of a no-change `apply` (CPU profile). What the index does
 * for these parts is done here: the request API (`client.request`) on every dispatcher.
 */
Object.assign(Dispatcher.prototype, api);

export { buildConnector, Client, errors, Pool };
