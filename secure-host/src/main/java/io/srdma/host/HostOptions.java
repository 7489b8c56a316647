package io.srdma.host;

import io.srdma.channel.ChannelException;
import io.srdma.channel.SealedLayout;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.Policy;
import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.DeviceOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;

/**
 * Settings of a {@link RegionHost}; fluent setters, checked by {@link RegionHost#start}.
 *
 * <p>Thread safety: not thread-safe; fill it on one thread, then hand it to {@link
 * RegionHost#start}. The host keeps the instance: do not change it after {@code start}. Buffers:
 * none.
 */
public final class HostOptions {
  /** Most opener threads a host runs ({@link #openerThreads}). */
  public static final int MAX_OPENER_THREADS = 256;

  /** Most event-loop or worker threads of the control plane ({@link #controlThreads}). */
  public static final int MAX_CONTROL_THREADS = 64;

  /** Default of {@link #connectThreads}. */
  public static final int DEFAULT_CONNECT_THREADS = 8;

  /** Default of {@link #maxConnectsPerTenant}. */
  public static final int DEFAULT_MAX_CONNECTS_PER_TENANT = 2;

  /** Longest timeout, lifetime or interval: 100 years (as the policy's durations). */
  static final Duration MAX_DURATION = Duration.ofDays(36_500);

  /** How grants are scoped on the device. */
  public enum Scoping {
    /** Type-2 windows where the device enforces their bounds, else per-grant memory regions. */
    AUTO,
    /** Always a type-2 memory window bound to the grantee's QP. */
    WINDOW,
    /** Always a memory region registered over exactly the granted range. */
    REGION
  }

  private Credential credential;
  private DeploymentTrust trust;
  private Policy policy;
  private AuditTrail audit;
  private InetSocketAddress bind = new InetSocketAddress("127.0.0.1", 0);
  private String provider = "soft";
  private DeviceOptions device = new DeviceOptions();
  private Scoping scoping = Scoping.AUTO;
  private int maxSessions = 1024;
  private int maxSessionsPerTenant = 64;
  private int maxPendingHandshakes = 32;
  private int maxPendingHandshakesPerAddress = 4;
  private Duration firstRecordTimeout = Duration.ofSeconds(2);
  private Duration maxSessionLifetime;
  private int maxRejectedRecords = 64;
  private Set<InetAddress> allowedResponderAddresses = Set.of();
  private boolean trustHelloAddress;
  private int authFailuresPerMinute = 20;
  private Duration handshakeTimeout = Duration.ofSeconds(5);
  private Duration requestTimeout = Duration.ofSeconds(5);
  private Duration idleTimeout = Duration.ofSeconds(60);
  private Duration regionKeyRotation = Duration.ofMinutes(10);
  private int maxRecordPayload = SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD;
  private int receiveDepth = 256;
  private int openerThreads =
      Math.min(MAX_OPENER_THREADS, Runtime.getRuntime().availableProcessors());
  private CpuSet openerCpus;
  private CompletionProgress openerProgress = CompletionProgress.POLLER;
  private int controlThreads = Math.min(2, Runtime.getRuntime().availableProcessors());
  private int workerThreads = 8;
  private int connectThreads = DEFAULT_CONNECT_THREADS;
  private int maxConnectsPerTenant = DEFAULT_MAX_CONNECTS_PER_TENANT;

  /** The host's certificate and key (a server certificate of the deployment CA). */
  public HostOptions credential(Credential value) {
    credential = value;
    return this;
  }

  /** The deployment's CA and CRL: who may connect. */
  public HostOptions trust(DeploymentTrust value) {
    trust = value;
    return this;
  }

  /** The access policy in force at start. */
  public HostOptions policy(Policy value) {
    policy = value;
    return this;
  }

  /** Where authentications, grants, revocations and violations are recorded. */
  public HostOptions audit(AuditTrail value) {
    audit = value;
    return this;
  }

  /** Control-plane address (default 127.0.0.1, ephemeral port). */
  public HostOptions bind(InetSocketAddress value) {
    bind = value;
    return this;
  }

  /** RDMA provider: soft, ibv or auto (default soft). */
  public HostOptions provider(String value) {
    provider = value;
    return this;
  }

  /** Device options (soft: responder bind address; ibv: port and GID index). */
  public HostOptions device(DeviceOptions value) {
    device = value;
    return this;
  }

  /** How grants are scoped (default AUTO). */
  public HostOptions scoping(Scoping value) {
    scoping = value;
    return this;
  }

  /** Most sessions at once, all tenants (default 1024). */
  public HostOptions maxSessions(int value) {
    maxSessions = value;
    return this;
  }

  /** Most sessions (hence queue pairs) per tenant at once (default 64). */
  public HostOptions maxSessionsPerTenant(int value) {
    maxSessionsPerTenant = value;
    return this;
  }

  /** Most TLS handshakes in progress; more connections are closed at once (default 32). */
  public HostOptions maxPendingHandshakes(int value) {
    maxPendingHandshakes = value;
    return this;
  }

  /**
   * Most TLS handshakes in progress from one remote address (default 4): one address flooding idle
   * or slow connections cannot take every pending slot.
   */
  public HostOptions maxPendingHandshakesPerAddress(int value) {
    maxPendingHandshakesPerAddress = value;
    return this;
  }

  /**
   * A connection that sends no byte of its first TLS record within this time is closed (default 2
   * s; at most the handshake timeout), so idle connections give their pending slot back quickly. A
   * client sends its ClientHello right after connecting, but a cold JVM on a loaded machine takes
   * over a second to build its first one: lower this only where clients are warm.
   */
  public HostOptions firstRecordTimeout(Duration value) {
    firstRecordTimeout = value;
    return this;
  }

  /**
   * Sessions older than this are ended, their grants revoked, audited as {@code session-lifetime}
   * (default null: no limit). Peers reconnect, which re-checks their certificate from scratch.
   */
  public HostOptions maxSessionLifetime(Duration value) {
    maxSessionLifetime = value;
    return this;
  }

  /**
   * Rejected records and write notifications (bad tag, replay, stale slot, empty notification, out
   * of bounds) after which a session is ended, its grants revoked, audited once as {@code
   * rejected-records} (default 64). Only the first few rejections are audited one line each.
   */
  public HostOptions maxRejectedRecords(int value) {
    maxRejectedRecords = value;
    return this;
  }

  /**
   * Responder addresses (soft provider) a peer may name in HELLO besides its own TLS address, for
   * deployments where the control connection arrives through NAT or a proxy (default none).
   */
  public HostOptions allowedResponderAddresses(Collection<InetAddress> value) {
    allowedResponderAddresses = Set.copyOf(value);
    return this;
  }

  /**
   * Connect to whatever responder address a peer names in HELLO (default false). This lets a peer
   * make the host connect where it says (request forgery); only for networks where every peer is
   * trusted with that. Logged as a warning at start.
   */
  public HostOptions trustHelloAddress(boolean value) {
    trustHelloAddress = value;
    return this;
  }

  /** Failed authentications per remote address per minute before it is refused (default 20). */
  public HostOptions authFailuresPerMinute(int value) {
    authFailuresPerMinute = value;
    return this;
  }

  /** Deadline of the TLS handshake and of the session handshake (default 5 s). */
  public HostOptions handshakeTimeout(Duration value) {
    handshakeTimeout = value;
    return this;
  }

  /** Deadline of work done for one request, such as binding a window (default 5 s). */
  public HostOptions requestTimeout(Duration value) {
    requestTimeout = value;
    return this;
  }

  /** A session that sends nothing for this long is ended (default 60 s; clients ping). */
  public HostOptions idleTimeout(Duration value) {
    idleTimeout = value;
    return this;
  }

  /**
   * How often each region's key is rotated even when no READ grant ends (default 10 min, at least 1
   * s); it is also rotated whenever a READ grant on the region ends (docs/data-plane.md).
   */
  public HostOptions regionKeyRotation(Duration value) {
    regionKeyRotation = value;
    return this;
  }

  /** Largest payload of one record (default 64 KiB). */
  public HostOptions maxRecordPayload(int value) {
    maxRecordPayload = value;
    return this;
  }

  /**
   * Receive work requests kept posted per session for write notifications (default 256, 1..4096):
   * every sealed record a client writes takes one until the host opened it and reposted it, so each
   * client is told this number in HELLO_ACK and the host returns receive credits (the count of
   * receives reposted, written into a word of the client's every {@code receiveDepth / 2}): a
   * client posts no more records beyond the last credit than this (one past them would wait for a
   * receive: the transport's RNR retry). Lowered, with a warning in the log at start, where {@code
   * maxSessions} of them would not fit the device's completion queues (2^18 completions at most) or
   * its queue pairs.
   */
  public HostOptions receiveDepth(int value) {
    receiveDepth = value;
    return this;
  }

  /**
   * Threads that open records (default: the number of available processors, at most {@value
   * #MAX_OPENER_THREADS}). Each owns a completion queue shared by the sessions assigned to it (the
   * least loaded one when a session is established), polls it and opens and delivers every record
   * of those sessions itself, so one session's records are opened in order on one thread and a host
   * opens at up to this many cores' AES-GCM rate. A host never runs more than {@code maxSessions}.
   */
  public HostOptions openerThreads(int value) {
    openerThreads = value;
    return this;
  }

  /**
   * The CPUs the opener threads are pinned to (default null: wherever the scheduler puts them).
   * With the soft provider's responders ({@link DeviceOptions#responderCpus}) on the same CPUs and
   * the writers elsewhere, a host's whole receive path stays off the writers' cores: on 2 vCPUs a
   * sealed 1 MiB stream moved +30 % (docs/performance.md, session 28). The threads pin themselves
   * when the host starts, which fails ({@code INVALID_ARGUMENT}, nothing left running) when the set
   * cannot be honoured exactly or the platform is not 64-bit Linux.
   */
  public HostOptions openerCpus(CpuSet value) {
    openerCpus = value;
    return this;
  }

  /**
   * Who places a session's incoming requests into the host's memory on a provider that does it in
   * software ({@code soft}; an RNIC or {@code loopback} ignores it). {@link
   * CompletionProgress#POLLER} (default): the session's opener thread, which polls the completion
   * queue its records complete on, also reads and places the session's requests — one thread from
   * the socket to the delivered record, no wake-up between the device and the opener
   * (docs/performance.md, session 35). A connection reaches the opener only once its queue pair's
   * peer is checked; a listener that blocks holds its opener's sessions' placement too (as it
   * already holds their opening). {@link CompletionProgress#DEVICE}: the soft device's own
   * responder threads place them and the opener is woken for each batch of completions.
   */
  public HostOptions openerProgress(CompletionProgress value) {
    openerProgress = java.util.Objects.requireNonNull(value, "openerProgress");
    return this;
  }

  /**
   * Event-loop threads of the control plane (default: 2, or 1 on one core; at most {@link
   * #MAX_CONTROL_THREADS}). Every control connection, whatever their number, is served by one of
   * them: TLS records in and out, the handshake's messages; nothing on them blocks.
   */
  public HostOptions controlThreads(int value) {
    controlThreads = value;
    return this;
  }

  /**
   * Worker threads of the control plane (default 8; at most {@link #MAX_CONTROL_THREADS}): they
   * handle the sessions' control frames (policy decisions, audit writes, queue pair set-up), each
   * session's in order and one at a time, and the TLS handshakes' certificate checks and
   * signatures. A frame that waits (a RELEASE waits, bounded, for the session's records to be
   * opened) holds one of them.
   */
  public HostOptions workerThreads(int value) {
    workerThreads = value;
    return this;
  }

  /**
   * Threads that connect sessions' queue pairs (default 8; at most {@link #MAX_CONTROL_THREADS}).
   * On the soft provider the host's queue pair connects to the responder the peer named in its
   * HELLO when its KEY_CONFIRM arrives, and that peer decides how long the connect takes (up to the
   * device's transport timeout): these threads take that wait, never the workers. Each runs one
   * connect at a time; made on demand, they end after 10 s idle.
   */
  public HostOptions connectThreads(int value) {
    connectThreads = value;
    return this;
  }

  /**
   * Most queue-pair connects of one tenant at once (default 2; at most {@link #connectThreads}).
   * More of its sessions wait for their turn, within their handshake deadline, so one tenant's
   * peers that stall their connects keep {@code connectThreads - maxConnectsPerTenant} threads free
   * for the other tenants.
   */
  public HostOptions maxConnectsPerTenant(int value) {
    maxConnectsPerTenant = value;
    return this;
  }

  int controlThreads() {
    return controlThreads;
  }

  int connectThreads() {
    return connectThreads;
  }

  int maxConnectsPerTenant() {
    return maxConnectsPerTenant;
  }

  int workerThreads() {
    return workerThreads;
  }

  Credential credential() {
    return credential;
  }

  DeploymentTrust trust() {
    return trust;
  }

  Policy policy() {
    return policy;
  }

  AuditTrail audit() {
    return audit;
  }

  InetSocketAddress bind() {
    return bind;
  }

  String provider() {
    return provider;
  }

  DeviceOptions device() {
    return device;
  }

  Scoping scoping() {
    return scoping;
  }

  int maxSessions() {
    return maxSessions;
  }

  int maxSessionsPerTenant() {
    return maxSessionsPerTenant;
  }

  int maxPendingHandshakes() {
    return maxPendingHandshakes;
  }

  int maxPendingHandshakesPerAddress() {
    return maxPendingHandshakesPerAddress;
  }

  Duration firstRecordTimeout() {
    return firstRecordTimeout;
  }

  Duration maxSessionLifetime() {
    return maxSessionLifetime;
  }

  int maxRejectedRecords() {
    return maxRejectedRecords;
  }

  Set<InetAddress> allowedResponderAddresses() {
    return allowedResponderAddresses;
  }

  boolean trustHelloAddress() {
    return trustHelloAddress;
  }

  int authFailuresPerMinute() {
    return authFailuresPerMinute;
  }

  Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  Duration requestTimeout() {
    return requestTimeout;
  }

  Duration idleTimeout() {
    return idleTimeout;
  }

  Duration regionKeyRotation() {
    return regionKeyRotation;
  }

  int maxRecordPayload() {
    return maxRecordPayload;
  }

  int receiveDepth() {
    return receiveDepth;
  }

  int openerThreads() {
    return openerThreads;
  }

  CpuSet openerCpus() {
    return openerCpus;
  }

  CompletionProgress openerProgress() {
    return openerProgress;
  }

  void check() {
    require(credential, "credential");
    require(trust, "trust");
    require(policy, "policy");
    require(audit, "audit");
    require(bind, "bind");
    require(provider, "provider");
    require(device, "device");
    require(scoping, "scoping");
    positive("maxSessions", maxSessions);
    positive("maxSessionsPerTenant", maxSessionsPerTenant);
    positive("maxPendingHandshakes", maxPendingHandshakes);
    positive("maxPendingHandshakesPerAddress", maxPendingHandshakesPerAddress);
    positive("authFailuresPerMinute", authFailuresPerMinute);
    positive("firstRecordTimeout", firstRecordTimeout);
    if (maxSessionLifetime != null) {
      positive("maxSessionLifetime", maxSessionLifetime);
    }
    positive("maxRejectedRecords", maxRejectedRecords);
    positive("handshakeTimeout", handshakeTimeout);
    positive("requestTimeout", requestTimeout);
    positive("idleTimeout", idleTimeout);
    positive("regionKeyRotation", regionKeyRotation);
    if (regionKeyRotation.compareTo(Duration.ofSeconds(1)) < 0) {
      throw invalid("regionKeyRotation must be at least 1 s, got " + regionKeyRotation);
    }
    if (firstRecordTimeout.compareTo(handshakeTimeout) > 0) {
      throw invalid(
          "firstRecordTimeout ("
              + firstRecordTimeout
              + ") must not exceed handshakeTimeout ("
              + handshakeTimeout
              + ")");
    }
    if (maxRecordPayload < 1 || maxRecordPayload > (1 << 24)) {
      throw invalid("maxRecordPayload must be 1..16777216, got " + maxRecordPayload);
    }
    if (receiveDepth < 1 || receiveDepth > 4096) {
      throw invalid("receiveDepth must be 1..4096, got " + receiveDepth);
    }
    if (openerThreads < 1 || openerThreads > MAX_OPENER_THREADS) {
      throw invalid("openerThreads must be 1.." + MAX_OPENER_THREADS + ", got " + openerThreads);
    }
    if (controlThreads < 1 || controlThreads > MAX_CONTROL_THREADS) {
      throw invalid("controlThreads must be 1.." + MAX_CONTROL_THREADS + ", got " + controlThreads);
    }
    if (workerThreads < 1 || workerThreads > MAX_CONTROL_THREADS) {
      throw invalid("workerThreads must be 1.." + MAX_CONTROL_THREADS + ", got " + workerThreads);
    }
    if (connectThreads < 1 || connectThreads > MAX_CONTROL_THREADS) {
      throw invalid("connectThreads must be 1.." + MAX_CONTROL_THREADS + ", got " + connectThreads);
    }
    if (maxConnectsPerTenant < 1 || maxConnectsPerTenant > connectThreads) {
      throw invalid(
          "maxConnectsPerTenant must be 1..connectThreads ("
              + connectThreads
              + "), got "
              + maxConnectsPerTenant);
    }
  }

  static void require(Object value, String name) {
    if (value == null) {
      throw invalid(name + " is required");
    }
  }

  static void positive(String name, int value) {
    if (value < 1) {
      throw invalid(name + " must be >= 1, got " + value);
    }
  }

  static void positive(String name, Duration value) {
    require(value, name);
    if (value.isNegative() || value.isZero()) {
      throw invalid(name + " must be positive, got " + value);
    }
    if (value.compareTo(MAX_DURATION) > 0) {
      // past ~292 years a deadline in nanoseconds overflows: the watchdog's sweep threw
      // ArithmeticException on every tick at the first established session, checking none after it
      throw invalid(name + " must be at most " + MAX_DURATION.toDays() + " days, got " + value);
    }
  }

  static ChannelException invalid(String message) {
    return new ChannelException(ChannelException.Reason.INVALID_ARGUMENT, message);
  }
}
