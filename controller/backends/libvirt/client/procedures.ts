// The one table of the remote procedures this client calls: number, args and
// ret layouts, as in remote_protocol.x (v9.0.0; numbers are append-only, so
// newer daemons agree). `args`/`ret` of `xdrVoid` mean the `.x` declares no
// struct. test/unit/backends/libvirt/protocol.test.ts checks every row.
import {
  remoteNonnullDomain as domain,
  remoteNonnullNetwork as network,
  remoteNonnullStoragePool as pool,
  remoteNonnullStorageVol as vol,
  remoteNonnullString as nonnullString,
  remoteString as optionalString,
  remoteUuid as uuid,
} from './remote-types.js';
import {
  xdrArray,
  xdrChar,
  xdrFixedArray,
  xdrHyper,
  xdrInt,
  xdrOptional,
  xdrStruct,
  xdrUchar,
  xdrUhyper,
  xdrUint,
  xdrUshort,
  xdrVoid,
  type XdrType,
} from './xdr-schema.js';

/** REMOTE_PROGRAM and REMOTE_PROTOCOL_VERSION. */
export const REMOTE_PROGRAM = 0x20008086;
export const REMOTE_PROTOCOL_VERSION = 1;

export interface Procedure<Args, Ret> {
  /** The `.x` name without `REMOTE_PROC_`, e.g. `DOMAIN_LOOKUP_BY_NAME`. */
  readonly name: string;
  readonly number: number;
  readonly args: XdrType<Args>;
  readonly ret: XdrType<Ret>;
}

function procedure<Args, Ret>(name: string, number: number, args: XdrType<Args>, ret: XdrType<Ret>): Procedure<Args, Ret> {
  return { name, number, args, ret };
}

/** `remote_<name>_args` / `_ret`, the rpcgen naming the test checks. */
const args = <F extends Record<string, XdrType<unknown>>>(name: string, fields: F) => xdrStruct(`remote_${name}_args`, fields);
const ret = <F extends Record<string, XdrType<unknown>>>(name: string, fields: F) => xdrStruct(`remote_${name}_ret`, fields);

/** The `{dom, flags}` args shared by many domain procedures. */
const domainFlags = (name: string) => args(name, { dom: domain, flags: xdrUint });

// Bounds from remote_protocol.x.
const REMOTE_AUTH_TYPE_LIST_MAX = 20;
const REMOTE_DOMAIN_LIST_MAX = 16384;
const REMOTE_STORAGE_POOL_LIST_MAX = 16384;
const REMOTE_STORAGE_VOL_LIST_MAX = 16384;
const REMOTE_NETWORK_LIST_MAX = 16384;
const REMOTE_NETWORK_DHCP_LEASES_MAX = 65536;
const REMOTE_DOMAIN_INTERFACE_MAX = 2048;
const REMOTE_DOMAIN_IP_ADDR_MAX = 2048;

const domainIpAddr = xdrStruct('remote_domain_ip_addr', { type: xdrInt, addr: nonnullString, prefix: xdrUint });
const domainInterface = xdrStruct('remote_domain_interface', {
  name: nonnullString,
  hwaddr: optionalString,
  addrs: xdrArray(domainIpAddr, REMOTE_DOMAIN_IP_ADDR_MAX),
});
const networkDhcpLease = xdrStruct('remote_network_dhcp_lease', {
  iface: nonnullString,
  expirytime: xdrHyper,
  type: xdrInt,
  mac: optionalString,
  iaid: optionalString,
  ipaddr: nonnullString,
  prefix: xdrUint,
  hostname: optionalString,
  clientid: optionalString,
});
const domainEventLifecycleMsg = xdrStruct('remote_domain_event_lifecycle_msg', { dom: domain, event: xdrInt, detail: xdrInt });

export const Procedures = {
  // Connection and host.
  connectOpen: procedure('CONNECT_OPEN', 1, args('connect_open', { name: optionalString, flags: xdrUint }), xdrVoid),
  connectClose: procedure('CONNECT_CLOSE', 2, xdrVoid, xdrVoid),
  connectGetType: procedure('CONNECT_GET_TYPE', 3, xdrVoid, ret('connect_get_type', { type: nonnullString })),
  connectGetVersion: procedure('CONNECT_GET_VERSION', 4, xdrVoid, ret('connect_get_version', { hv_ver: xdrUhyper })),
  nodeGetInfo: procedure(
    'NODE_GET_INFO',
    6,
    xdrVoid,
    ret('node_get_info', {
      model: xdrFixedArray(xdrChar, 32),
      memory: xdrUhyper,
      cpus: xdrInt,
      mhz: xdrInt,
      nodes: xdrInt,
      sockets: xdrInt,
      cores: xdrInt,
      threads: xdrInt,
    }),
  ),
  connectGetHostname: procedure('CONNECT_GET_HOSTNAME', 59, xdrVoid, ret('connect_get_hostname', { hostname: nonnullString })),
  connectSupportsFeature: procedure(
    'CONNECT_SUPPORTS_FEATURE',
    60,
    args('connect_supports_feature', { feature: xdrInt }),
    ret('connect_supports_feature', { supported: xdrInt }),
  ),
  // remote_auth_type is an enum: XDR codes it as int.
  authList: procedure('AUTH_LIST', 66, xdrVoid, ret('auth_list', { types: xdrArray(xdrInt, REMOTE_AUTH_TYPE_LIST_MAX) })),
  nodeGetFreeMemory: procedure('NODE_GET_FREE_MEMORY', 102, xdrVoid, ret('node_get_free_memory', { freeMem: xdrUhyper })),
  connectGetUri: procedure('CONNECT_GET_URI', 110, xdrVoid, ret('connect_get_uri', { uri: nonnullString })),
  connectGetLibVersion: procedure('CONNECT_GET_LIB_VERSION', 157, xdrVoid, ret('connect_get_lib_version', { lib_ver: xdrUhyper })),

  // Domains.
  domainGetXmlDesc: procedure('DOMAIN_GET_XML_DESC', 14, domainFlags('domain_get_xml_desc'), ret('domain_get_xml_desc', { xml: nonnullString })),
  domainGetInfo: procedure(
    'DOMAIN_GET_INFO',
    16,
    args('domain_get_info', { dom: domain }),
    ret('domain_get_info', { state: xdrUchar, maxMem: xdrUhyper, memory: xdrUhyper, nrVirtCpu: xdrUshort, cpuTime: xdrUhyper }),
  ),
  domainLookupByName: procedure(
    'DOMAIN_LOOKUP_BY_NAME',
    23,
    args('domain_lookup_by_name', { name: nonnullString }),
    ret('domain_lookup_by_name', { dom: domain }),
  ),
  domainLookupByUuid: procedure('DOMAIN_LOOKUP_BY_UUID', 24, args('domain_lookup_by_uuid', { uuid }), ret('domain_lookup_by_uuid', { dom: domain })),
  domainReboot: procedure('DOMAIN_REBOOT', 27, domainFlags('domain_reboot'), xdrVoid),
  domainResume: procedure('DOMAIN_RESUME', 28, args('domain_resume', { dom: domain }), xdrVoid),
  domainSetAutostart: procedure('DOMAIN_SET_AUTOSTART', 29, args('domain_set_autostart', { dom: domain, autostart: xdrInt }), xdrVoid),
  domainSuspend: procedure('DOMAIN_SUSPEND', 34, args('domain_suspend', { dom: domain }), xdrVoid),
  domainUpdateDeviceFlags: procedure(
    'DOMAIN_UPDATE_DEVICE_FLAGS',
    174,
    args('domain_update_device_flags', { dom: domain, xml: nonnullString, flags: xdrUint }),
    xdrVoid,
  ),
  domainManagedSave: procedure('DOMAIN_MANAGED_SAVE', 182, domainFlags('domain_managed_save'), xdrVoid),
  domainHasManagedSaveImage: procedure(
    'DOMAIN_HAS_MANAGED_SAVE_IMAGE',
    183,
    domainFlags('domain_has_managed_save_image'),
    ret('domain_has_managed_save_image', { result: xdrInt }),
  ),
  domainManagedSaveRemove: procedure('DOMAIN_MANAGED_SAVE_REMOVE', 184, domainFlags('domain_managed_save_remove'), xdrVoid),
  domainCreateWithFlags: procedure('DOMAIN_CREATE_WITH_FLAGS', 196, domainFlags('domain_create_with_flags'), ret('domain_create_with_flags', { dom: domain })),
  domainSetVcpusFlags: procedure('DOMAIN_SET_VCPUS_FLAGS', 199, args('domain_set_vcpus_flags', { dom: domain, nvcpus: xdrUint, flags: xdrUint }), xdrVoid),
  domainSetMemoryFlags: procedure('DOMAIN_SET_MEMORY_FLAGS', 204, args('domain_set_memory_flags', { dom: domain, memory: xdrUhyper, flags: xdrUint }), xdrVoid),
  domainGetState: procedure('DOMAIN_GET_STATE', 212, domainFlags('domain_get_state'), ret('domain_get_state', { state: xdrInt, reason: xdrInt })),
  domainUndefineFlags: procedure('DOMAIN_UNDEFINE_FLAGS', 231, domainFlags('domain_undefine_flags'), xdrVoid),
  domainDestroyFlags: procedure('DOMAIN_DESTROY_FLAGS', 234, domainFlags('domain_destroy_flags'), xdrVoid),
  domainShutdownFlags: procedure('DOMAIN_SHUTDOWN_FLAGS', 258, domainFlags('domain_shutdown_flags'), xdrVoid),
  domainSetMetadata: procedure(
    'DOMAIN_SET_METADATA',
    264,
    args('domain_set_metadata', { dom: domain, type: xdrInt, metadata: optionalString, key: optionalString, uri: optionalString, flags: xdrUint }),
    xdrVoid,
  ),
  connectListAllDomains: procedure(
    'CONNECT_LIST_ALL_DOMAINS',
    273,
    args('connect_list_all_domains', { need_results: xdrInt, flags: xdrUint }),
    ret('connect_list_all_domains', { domains: xdrArray(domain, REMOTE_DOMAIN_LIST_MAX), ret: xdrUint }),
  ),
  connectDomainEventCallbackRegisterAny: procedure(
    'CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY',
    316,
    args('connect_domain_event_callback_register_any', { eventID: xdrInt, dom: xdrOptional(domain) }),
    ret('connect_domain_event_callback_register_any', { callbackID: xdrInt }),
  ),
  connectDomainEventCallbackDeregisterAny: procedure(
    'CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY',
    317,
    args('connect_domain_event_callback_deregister_any', { callbackID: xdrInt }),
    xdrVoid,
  ),
  domainDefineXmlFlags: procedure(
    'DOMAIN_DEFINE_XML_FLAGS',
    350,
    args('domain_define_xml_flags', { xml: nonnullString, flags: xdrUint }),
    ret('domain_define_xml_flags', { dom: domain }),
  ),
  domainInterfaceAddresses: procedure(
    'DOMAIN_INTERFACE_ADDRESSES',
    353,
    args('domain_interface_addresses', { dom: domain, source: xdrUint, flags: xdrUint }),
    ret('domain_interface_addresses', { ifaces: xdrArray(domainInterface, REMOTE_DOMAIN_INTERFACE_MAX) }),
  ),

  // Networks.
  networkCreateXml: procedure('NETWORK_CREATE_XML', 40, args('network_create_xml', { xml: nonnullString }), ret('network_create_xml', { net: network })),
  networkDestroy: procedure('NETWORK_DESTROY', 42, args('network_destroy', { net: network }), xdrVoid),
  networkGetXmlDesc: procedure(
    'NETWORK_GET_XML_DESC',
    43,
    args('network_get_xml_desc', { net: network, flags: xdrUint }),
    ret('network_get_xml_desc', { xml: nonnullString }),
  ),
  networkLookupByName: procedure(
    'NETWORK_LOOKUP_BY_NAME',
    46,
    args('network_lookup_by_name', { name: nonnullString }),
    ret('network_lookup_by_name', { net: network }),
  ),
  connectListAllNetworks: procedure(
    'CONNECT_LIST_ALL_NETWORKS',
    283,
    args('connect_list_all_networks', { need_results: xdrInt, flags: xdrUint }),
    ret('connect_list_all_networks', { nets: xdrArray(network, REMOTE_NETWORK_LIST_MAX), ret: xdrUint }),
  ),
  networkGetDhcpLeases: procedure(
    'NETWORK_GET_DHCP_LEASES',
    341,
    args('network_get_dhcp_leases', { net: network, mac: optionalString, need_results: xdrInt, flags: xdrUint }),
    ret('network_get_dhcp_leases', { leases: xdrArray(networkDhcpLease, REMOTE_NETWORK_DHCP_LEASES_MAX), ret: xdrUint }),
  ),

  // Storage pools and volumes.
  storagePoolCreateXml: procedure(
    'STORAGE_POOL_CREATE_XML',
    76,
    args('storage_pool_create_xml', { xml: nonnullString, flags: xdrUint }),
    ret('storage_pool_create_xml', { pool }),
  ),
  storagePoolDestroy: procedure('STORAGE_POOL_DESTROY', 80, args('storage_pool_destroy', { pool }), xdrVoid),
  storagePoolRefresh: procedure('STORAGE_POOL_REFRESH', 83, args('storage_pool_refresh', { pool, flags: xdrUint }), xdrVoid),
  storagePoolLookupByName: procedure(
    'STORAGE_POOL_LOOKUP_BY_NAME',
    84,
    args('storage_pool_lookup_by_name', { name: nonnullString }),
    ret('storage_pool_lookup_by_name', { pool }),
  ),
  storagePoolGetInfo: procedure(
    'STORAGE_POOL_GET_INFO',
    87,
    args('storage_pool_get_info', { pool }),
    ret('storage_pool_get_info', { state: xdrUchar, capacity: xdrUhyper, allocation: xdrUhyper, available: xdrUhyper }),
  ),
  storagePoolGetXmlDesc: procedure(
    'STORAGE_POOL_GET_XML_DESC',
    88,
    args('storage_pool_get_xml_desc', { pool, flags: xdrUint }),
    ret('storage_pool_get_xml_desc', { xml: nonnullString }),
  ),
  storageVolCreateXml: procedure(
    'STORAGE_VOL_CREATE_XML',
    93,
    args('storage_vol_create_xml', { pool, xml: nonnullString, flags: xdrUint }),
    ret('storage_vol_create_xml', { vol }),
  ),
  storageVolDelete: procedure('STORAGE_VOL_DELETE', 94, args('storage_vol_delete', { vol, flags: xdrUint }), xdrVoid),
  storageVolLookupByName: procedure(
    'STORAGE_VOL_LOOKUP_BY_NAME',
    95,
    args('storage_vol_lookup_by_name', { pool, name: nonnullString }),
    ret('storage_vol_lookup_by_name', { vol }),
  ),
  storageVolGetInfo: procedure(
    'STORAGE_VOL_GET_INFO',
    98,
    args('storage_vol_get_info', { vol }),
    ret('storage_vol_get_info', { type: xdrChar, capacity: xdrUhyper, allocation: xdrUhyper }),
  ),
  storageVolGetXmlDesc: procedure(
    'STORAGE_VOL_GET_XML_DESC',
    99,
    args('storage_vol_get_xml_desc', { vol, flags: xdrUint }),
    ret('storage_vol_get_xml_desc', { xml: nonnullString }),
  ),
  storageVolGetPath: procedure('STORAGE_VOL_GET_PATH', 100, args('storage_vol_get_path', { vol }), ret('storage_vol_get_path', { name: nonnullString })),
  storageVolCreateXmlFrom: procedure(
    'STORAGE_VOL_CREATE_XML_FROM',
    125,
    args('storage_vol_create_xml_from', { pool, xml: nonnullString, clonevol: vol, flags: xdrUint }),
    ret('storage_vol_create_xml_from', { vol }),
  ),
  // Streams: the reply opens the stream; the data follows as STREAM messages of the same serial.
  storageVolUpload: procedure('STORAGE_VOL_UPLOAD', 208, args('storage_vol_upload', { vol, offset: xdrUhyper, length: xdrUhyper, flags: xdrUint }), xdrVoid),
  storageVolDownload: procedure(
    'STORAGE_VOL_DOWNLOAD',
    209,
    args('storage_vol_download', { vol, offset: xdrUhyper, length: xdrUhyper, flags: xdrUint }),
    xdrVoid,
  ),
  connectListAllStoragePools: procedure(
    'CONNECT_LIST_ALL_STORAGE_POOLS',
    281,
    args('connect_list_all_storage_pools', { need_results: xdrInt, flags: xdrUint }),
    ret('connect_list_all_storage_pools', { pools: xdrArray(pool, REMOTE_STORAGE_POOL_LIST_MAX), ret: xdrUint }),
  ),
  storagePoolListAllVolumes: procedure(
    'STORAGE_POOL_LIST_ALL_VOLUMES',
    282,
    args('storage_pool_list_all_volumes', { pool, need_results: xdrInt, flags: xdrUint }),
    ret('storage_pool_list_all_volumes', { vols: xdrArray(vol, REMOTE_STORAGE_VOL_LIST_MAX), ret: xdrUint }),
  ),
} as const;

/** Messages the daemon sends unasked (type MESSAGE): the procedure number and its `_msg` layout. */
export const Events = {
  domainEventCallbackLifecycle: {
    name: 'DOMAIN_EVENT_CALLBACK_LIFECYCLE',
    number: 318,
    msg: xdrStruct('remote_domain_event_callback_lifecycle_msg', { callbackID: xdrInt, msg: domainEventLifecycleMsg }),
  },
} as const;
