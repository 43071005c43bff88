// The User-Agent of banlieue's requests to backends and image servers: a
// vCenter's session list, a PVE access log or a web server's log tells them
// apart by it.
import { PACKAGE_VERSION } from '../../infra/version.js';

export const BACKEND_USER_AGENT = `banlieue/${PACKAGE_VERSION}`;
