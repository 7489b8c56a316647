package io.srdma.host;

import io.srdma.keys.MutualTls;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.GrantAuthority;
import io.srdma.verbs.DeviceContext;
import java.security.SecureRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What a host gives each of its sessions, fixed at start: settings, the policy authority, the audit
 * trail, the counters, the device, the host's shared tables, its opener pool, its two scheduled
 * threads, its workers and its queue-pair connector. Passed to a session instead of the session
 * asking the {@link RegionHost} for each; every reference is immutable, and every object it names
 * is thread-safe.
 *
 * @param name the host's name, the prefix of its threads' names
 * @param options the host's settings
 * @param tls the mutual TLS 1.3 server side
 * @param authority the policy's grant decisions
 * @param audit the audit trail
 * @param counters the host's counters
 * @param limiter failed authentications per address
 * @param handshakes admission before authentication
 * @param responderAddresses which responder address a HELLO may name
 * @param random session ids, grant ids, ephemeral keys
 * @param device the opened device
 * @param scopedByRegion grants are scoped by per-grant memory regions, not type-2 windows
 * @param receiveDepth receive work requests posted per session
 * @param tables domains, regions, grants, sessions and quotas
 * @param openers the threads that poll completions and open records
 * @param timer REVOKE notices of expiries, key rotations, queue-pair-error endings
 * @param watchdog host-decided session ends and grant expiries (never writes to a peer)
 * @param workers the sessions' strands and the TLS engines' delegated tasks (a bounded pool)
 * @param connector the queue pairs' connects (a wait the peer controls: never on the workers)
 */
record HostContext(
    String name,
    HostOptions options,
    MutualTls tls,
    GrantAuthority authority,
    AuditTrail audit,
    HostCounters counters,
    AuthFailureLimiter limiter,
    PendingHandshakes handshakes,
    ResponderAddresses responderAddresses,
    SecureRandom random,
    DeviceContext device,
    boolean scopedByRegion,
    int receiveDepth,
    HostTables tables,
    OpenerPool openers,
    ScheduledExecutorService timer,
    ScheduledExecutorService watchdog,
    ExecutorService workers,
    QueuePairConnector connector) {}
