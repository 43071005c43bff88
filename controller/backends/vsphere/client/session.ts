// A logged-in vim25 session: ServiceContent, SessionManager.Login/Logout, and
// one transparent re-login when the server has dropped the session.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { XmlFields } from './soap-envelope.js';
import { HttpsSoapTransport, type SoapCaller, type SoapTransportOptions } from './transport.js';
import type { ManagedObjectReference, ServiceContent } from './vim-types.js';
import { isVsphereFault } from './vsphere-fault.js';
import { childMoRef, moRefFields } from './wire-values.js';
import type { XmlElement } from './xml-element.js';

export interface SessionOptions extends SoapTransportOptions {
  readonly username: string;
  readonly password: string;
}

/** What every vim25 service module calls: a method on a managed object. */
export interface VimInvoker {
  readonly serviceContent: ServiceContent;
  /** Calls `method` on `self`; resolves to the `<methodResponse>` element. */
  invoke(method: string, self: ManagedObjectReference, args?: XmlFields): Promise<XmlElement>;
}

const SERVICE_INSTANCE: ManagedObjectReference = { type: 'ServiceInstance', value: 'ServiceInstance' };

export class VsphereSession implements VimInvoker {
  private loggingIn: Promise<void> | undefined;
  private sessionKey: string | undefined;
  /** Successful logins so far; tells a stale NotAuthenticated from a current one. */
  private logins = 0;
  private ended = false;

  private constructor(
    private readonly caller: SoapCaller,
    readonly serviceContent: ServiceContent,
    private readonly credentials: { readonly username: string; readonly password: string },
  ) {}

  /** Connects, reads ServiceContent and logs in. Wrong credentials: BackendError Unauthorized. */
  static async open(options: SessionOptions, caller: SoapCaller = new HttpsSoapTransport(options)): Promise<VsphereSession> {
    try {
      const response = await caller.call('RetrieveServiceContent', { _this: moRefFields(SERVICE_INSTANCE) });
      const session = new VsphereSession(caller, toServiceContent(response), {
        username: options.username,
        password: options.password,
      });
      await session.login();
      return session;
    } catch (error) {
      caller.close();
      throw error;
    }
  }

  /** The server's key of the current session (UserSession.key), for TerminateSession. */
  get key(): string | undefined {
    return this.sessionKey;
  }

  async invoke(method: string, self: ManagedObjectReference, args: XmlFields = {}): Promise<XmlElement> {
    if (this.ended) throw closedError(method);
    const fields = { _this: moRefFields(self), ...args };
    const loginsBefore = this.logins;
    try {
      return await this.caller.call(method, fields);
    } catch (error) {
      // Sessions expire (vCenter: 30 min idle by default) or are terminated. The
      // server checks the session before running the method, so retrying once
      // after a fresh login cannot run it twice. A session closed here logs in no more.
      if (!isVsphereFault(error, 'NotAuthenticated')) throw error;
      if (this.ended) throw closedError(method);
      // A call sent with the old cookie may fail after another one logged in again.
      if (this.logins === loginsBefore) await this.relogin();
      return this.caller.call(method, fields);
    }
  }

  /** Closed (or closing): no call is sent any more. */
  get closed(): boolean {
    return this.ended;
  }

  /** Ends the session on the server and closes connections. Errors are not thrown: the session is gone either way. */
  async close(): Promise<void> {
    this.ended = true;
    try {
      await this.caller.call('Logout', { _this: moRefFields(this.serviceContent.sessionManager) });
    } catch {
      // Already logged out, expired or unreachable: nothing left to end.
    } finally {
      this.sessionKey = undefined;
      this.caller.close();
    }
  }

  private relogin(): Promise<void> {
    // Concurrent calls that all saw NotAuthenticated share one Login.
    this.loggingIn ??= (async () => {
      try {
        this.caller.clearSession();
        await this.login();
      } finally {
        this.loggingIn = undefined;
      }
    })();
    return this.loggingIn;
  }

  private async login(): Promise<void> {
    const response = await this.caller.call('Login', {
      _this: moRefFields(this.serviceContent.sessionManager),
      userName: this.credentials.username,
      password: this.credentials.password,
    });
    this.sessionKey = response.child('returnval')?.childText('key');
    this.logins += 1;
  }
}

function closedError(method: string): BackendError {
  return new BackendError(BackendErrorKind.Unreachable, `${method}: the session was closed`);
}

function toServiceContent(response: XmlElement): ServiceContent {
  const content = response.child('returnval');
  const about = content?.child('about');
  // A SOAP server that is not vCenter (or a broken one): a protocol error, like the decoders'.
  if (content === undefined || about === undefined) throw new Error('RetrieveServiceContent: no ServiceContent in the response');
  return {
    about: {
      fullName: about.childText('fullName') ?? '',
      apiType: about.childText('apiType') ?? '',
      apiVersion: about.childText('apiVersion') ?? '',
      instanceUuid: about.childText('instanceUuid'),
    },
    rootFolder: childMoRef(content, 'rootFolder'),
    propertyCollector: childMoRef(content, 'propertyCollector'),
    viewManager: childMoRef(content, 'viewManager'),
    sessionManager: childMoRef(content, 'sessionManager'),
    searchIndex: childMoRef(content, 'searchIndex'),
  };
}
