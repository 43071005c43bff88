// vim25 faults as typed errors. The fault's type name (xsi:type of the fault
// detail) decides the kind; faultstring is only ever a message, never matched.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { localName, type XmlElement } from './xml-element.js';

/**
 * Kind per fault type. Types not listed are Rejected: the server understood the
 * call and refused it. Subtypes must be listed themselves (vCenter sends the
 * concrete type), e.g. InvalidPowerState is its own entry beside InvalidState.
 */
const KIND_BY_FAULT: Readonly<Record<string, BackendErrorKind>> = {
  NotAuthenticated: BackendErrorKind.Unauthorized,
  InvalidLogin: BackendErrorKind.Unauthorized,
  NoPermission: BackendErrorKind.Unauthorized,
  ManagedObjectNotFound: BackendErrorKind.NotFound,
  InvalidPowerState: BackendErrorKind.Rejected,
  InvalidState: BackendErrorKind.Rejected,
  DuplicateName: BackendErrorKind.Rejected,
  InvalidArgument: BackendErrorKind.Rejected,
  // The server or a host could not do it now; nothing about the request is wrong.
  HostCommunication: BackendErrorKind.Unreachable,
  HostNotConnected: BackendErrorKind.Unreachable,
  HostNotReachable: BackendErrorKind.Unreachable,
  RequestCanceled: BackendErrorKind.Unreachable,
  Timedout: BackendErrorKind.Unreachable,
};

/** The kind a fault type maps to when raised by a method call. */
export function kindOfFault(faultType: string): BackendErrorKind {
  return KIND_BY_FAULT[faultType] ?? BackendErrorKind.Rejected;
}

/** A vim25 fault, from a SOAP Fault or from a failed Task's `info.error`. */
export class VsphereFault extends BackendError {
  constructor(
    kind: BackendErrorKind,
    /** The vim25 fault type, e.g. `InvalidPowerState`, `ManagedObjectNotFound`. */
    readonly faultType: string,
    message: string,
    /** The fault object (its fields, e.g. `obj` of ManagedObjectNotFound), when sent. */
    readonly detail?: XmlElement,
  ) {
    super(kind, message, { code: faultType });
    this.name = 'VsphereFault';
  }
}

/** A `<soapenv:Fault>` element → VsphereFault; the method name goes into the message. */
export function faultFromSoap(method: string, fault: XmlElement): VsphereFault {
  const detail = fault.child('detail')?.children[0];
  // `<InvalidLoginFault xsi:type="InvalidLogin">`: the element name carries a Fault suffix.
  const faultType = detail === undefined ? 'SystemError' : typeName(detail, detail.name.replace(/Fault$/, ''));
  const text = fault.childText('faultstring') ?? '';
  const message = `${method}: ${faultType}${text === '' ? '' : `: ${text}`}`;
  return new VsphereFault(kindOfFault(faultType), faultType, message, detail);
}

/** A Task's `info.error` (LocalizedMethodFault) → VsphereFault of kind TaskFailed. */
export function faultFromTask(taskName: string, error: XmlElement): VsphereFault {
  const fault = error.child('fault');
  const faultType = fault === undefined ? 'SystemError' : typeName(fault, 'SystemError');
  const text = error.childText('localizedMessage') ?? '';
  const message = `${taskName}: ${faultType}${text === '' ? '' : `: ${text}`}`;
  return new VsphereFault(BackendErrorKind.TaskFailed, faultType, message, fault);
}

function typeName(element: XmlElement, fallback: string): string {
  return element.xsiType === undefined ? fallback : localName(element.xsiType);
}

/** True when `error` is a VsphereFault of this fault type. */
export function isVsphereFault(error: unknown, faultType?: string): error is VsphereFault {
  return error instanceof VsphereFault && (faultType === undefined || error.faultType === faultType);
}
