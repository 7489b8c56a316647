package io.srdma.channel;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RekeyPolicy;
import io.srdma.verbs.DeviceOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;

/**
 * Settings of a {@link SecureRdmaClient}; fluent setters, checked by {@code connect}.
 *
 * <p>Thread safety: not thread-safe; fill it on one thread, then hand it to {@link
 * SecureRdmaClient#connect}. The client keeps the instance: do not change it after {@code connect}.
 * Threads: none of these settings adds a control-plane thread (one event loop, one timer and a few
 * workers serve every client of the process); {@link #sealingThreads} are the client's own.
 * Buffers: none (the credential and trust are shared, not copied).
 */
public final class ClientOptions {
  /** Records that may be in flight at once unless {@link #stagingSlots(int)} says otherwise. */
  public static final int DEFAULT_STAGING_SLOTS = 64;

  /** Largest registered buffer (staging, read): one ByteBuffer, heap or direct. */
  static final int MAX_BUFFER = Integer.MAX_VALUE - 8;

  /** Longest timeout or interval: 100 years (as the policy's durations). */
  static final Duration MAX_DURATION = Duration.ofDays(36_500);

  private Credential credential;
  private DeploymentTrust trust;
  private InetSocketAddress host;
  private PeerIdentity hostIdentity;
  private boolean anyHost;

  private String provider = "soft";
  private DeviceOptions device = new DeviceOptions();
  private Set<InetAddress> allowedResponderAddresses = Set.of();
  private Duration connectTimeout = Duration.ofSeconds(5);
  private Duration requestTimeout = Duration.ofSeconds(5);
  private Duration keepalive = Duration.ofSeconds(20);
  private int maxRecordPayload = SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD;
  private int stagingSlots = DEFAULT_STAGING_SLOTS;
  private int maxReadBytes = 4 << 20;
  private int sealingThreads = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
  private RekeyPolicy rekeyPolicy = RekeyPolicy.fromSystemProperties();
  private int idleSpins = 8;

  /** The tenant peer's certificate and key: identity and tenant come from it. */
  public ClientOptions credential(Credential value) {
    credential = value;
    return this;
  }

  /** The deployment's CA and CRL: which hosts to trust. */
  public ClientOptions trust(DeploymentTrust value) {
    trust = value;
    return this;
  }

  /** The host's control-plane address. */
  public ClientOptions host(InetSocketAddress value) {
    host = value;
    return this;
  }

  /**
   * The identity the host must present, {@code srdma://host/<name>} (required, unless {@link
   * #anyHostForDevelopment()}). A host whose certificate names another identity — another host of
   * the same deployment, or a tenant peer — is refused during the TLS handshake, before this client
   * sends its certificate or any data: {@link ChannelException.Reason#AUTHENTICATION_FAILED} with
   * detail {@code UNEXPECTED_PEER} (or {@code WRONG_USAGE} for a non-host certificate).
   */
  public ClientOptions hostIdentity(PeerIdentity value) {
    hostIdentity = value;
    return this;
  }

  /** {@link #hostIdentity(PeerIdentity)} of {@code srdma://host/<name>}. */
  public ClientOptions hostName(String name) {
    try {
      hostIdentity = PeerIdentity.host(name);
    } catch (KeyExchangeException e) {
      throw invalid("host name: " + e.getMessage());
    }
    return this;
  }

  /**
   * Development only: accept any host of the deployment instead of pinning one. Any host could then
   * pose as this one and read the tenant's data; every connect logs a warning.
   */
  public ClientOptions anyHostForDevelopment() {
    anyHost = true;
    return this;
  }

  /** RDMA provider: soft, ibv or auto (default soft). */
  public ClientOptions provider(String value) {
    provider = value;
    return this;
  }

  /** Device options for this client's queue pair. */
  public ClientOptions device(DeviceOptions value) {
    device = value;
    return this;
  }

  /**
   * Responder addresses (soft provider) the host may name in HELLO_ACK besides its own address on
   * the control connection, for deployments where the host is reached through NAT or a proxy
   * (default none). Any other address is refused before the queue pair connects to it, so a host
   * cannot make its clients connect where it says. As {@code HostOptions.allowedResponderAddresses}
   * on the host's side.
   */
  public ClientOptions allowedResponderAddresses(Collection<InetAddress> value) {
    allowedResponderAddresses = Set.copyOf(value);
    return this;
  }

  /**
   * Deadline of the TCP connect, of the TLS handshake and of each wait for the host's answer in the
   * session handshake (default 5 s; positive, at most 36,500 days, else {@code connect} refuses it
   * with {@code INVALID_ARGUMENT}).
   */
  public ClientOptions connectTimeout(Duration value) {
    connectTimeout = value;
    return this;
  }

  /**
   * Deadline of each request and operation (default 5 s); also the longest a control message waits
   * for a host that does not read, after which the connection is closed. Positive, at most 36,500
   * days.
   */
  public ClientOptions requestTimeout(Duration value) {
    requestTimeout = value;
    return this;
  }

  /**
   * Interval of keep-alive pings (default 20 s; the host ends idle sessions after 60 s). Positive,
   * at most 36,500 days.
   */
  public ClientOptions keepalive(Duration value) {
    keepalive = value;
    return this;
  }

  /** Largest payload of one record (default 64 KiB); larger writes are split. */
  public ClientOptions maxRecordPayload(int value) {
    maxRecordPayload = value;
    return this;
  }

  /**
   * Records that may be in flight at once (registered staging slots, default {@value
   * #DEFAULT_STAGING_SLOTS}). Each record also holds one of the receives the host keeps posted for
   * the session (its {@code receiveDepth}, 256 by default, said in HELLO_ACK) until the host opened
   * it and reposted the receive, which the host tells the client with receive credits: no more
   * records are posted beyond the host's credit than its receive depth (a write past them would
   * wait for a receive — RNR: on {@code ibv} an RNR NAK timer of up to a quarter second, and the
   * session lost after the budget), and one post list holds at most {@code min(stagingSlots,
   * receiveDepth - receiveDepth / 2 + 1)} records. A host without receive credits: no more records
   * in flight than its receive depth, logged once at INFO where fewer than the slots. 1..4096, and
   * the staging, {@code stagingSlots x (maxRecordPayload + 36)} bytes, is one buffer of at most
   * 2^31 - 9 bytes.
   */
  public ClientOptions stagingSlots(int value) {
    stagingSlots = value;
    return this;
  }

  /**
   * Largest single read (default 4 MiB), the size of the registered read buffer: 109 (one owner
   * record of one byte) to 2^31 - 9 bytes.
   */
  public ClientOptions maxReadBytes(int value) {
    maxReadBytes = value;
    return this;
  }

  /** Extra threads that seal the records of a large write in parallel (default cores - 1). */
  public ClientOptions sealingThreads(int value) {
    sealingThreads = value;
    return this;
  }

  /** When to move to a new key epoch (default from system properties, docs/keys.md). */
  public ClientOptions rekeyPolicy(RekeyPolicy value) {
    rekeyPolicy = value;
    return this;
  }

  /**
   * Polls the completion poller spins through when it finds nothing, before it enters the
   * completion queue's wait (default 8), which spins, yields and then blocks on its own. More helps
   * only where a poll is a memory read and a core is free: on {@code soft} a poll is a system call,
   * and on two cores the lane's spinning took the CPU the writer and the host needed (sealed 64 B
   * p50 26 µs with 64, 14 µs with 8; docs/performance.md, session 12).
   */
  public ClientOptions idleSpins(int value) {
    idleSpins = value;
    return this;
  }

  Credential credential() {
    return credential;
  }

  DeploymentTrust trust() {
    return trust;
  }

  InetSocketAddress host() {
    return host;
  }

  PeerIdentity hostIdentity() {
    return hostIdentity;
  }

  boolean anyHost() {
    return anyHost;
  }

  String provider() {
    return provider;
  }

  DeviceOptions device() {
    return device;
  }

  Set<InetAddress> allowedResponderAddresses() {
    return allowedResponderAddresses;
  }

  Duration connectTimeout() {
    return connectTimeout;
  }

  Duration requestTimeout() {
    return requestTimeout;
  }

  Duration keepalive() {
    return keepalive;
  }

  int maxRecordPayload() {
    return maxRecordPayload;
  }

  int stagingSlots() {
    return stagingSlots;
  }

  int maxReadBytes() {
    return maxReadBytes;
  }

  int sealingThreads() {
    return sealingThreads;
  }

  RekeyPolicy rekeyPolicy() {
    return rekeyPolicy;
  }

  int idleSpins() {
    return idleSpins;
  }

  void check() {
    require(credential, "credential");
    require(trust, "trust");
    require(host, "host");
    if (hostIdentity == null && !anyHost) {
      throw invalid(
          "hostIdentity is required: the identity srdma://host/<name> the host must present (or"
              + " anyHostForDevelopment() in development)");
    }
    if (hostIdentity != null && anyHost) {
      throw invalid("set either hostIdentity or anyHostForDevelopment(), not both");
    }
    if (hostIdentity != null && !hostIdentity.isHost()) {
      throw invalid(
          "hostIdentity must be a host identity srdma://host/<name>, not " + hostIdentity);
    }
    require(provider, "provider");
    require(device, "device");
    require(rekeyPolicy, "rekeyPolicy");
    positive("connectTimeout", connectTimeout);
    positive("requestTimeout", requestTimeout);
    positive("keepalive", keepalive);
    if (maxRecordPayload < 1 || maxRecordPayload > (1 << 24)) {
      throw invalid("maxRecordPayload must be 1..16777216, got " + maxRecordPayload);
    }
    if (stagingSlots < 1 || stagingSlots > 4096) {
      throw invalid("stagingSlots must be 1..4096, got " + stagingSlots);
    }
    long staging = (long) stagingSlots * (maxRecordPayload + SealedLayout.RECORD_OVERHEAD);
    if (staging > MAX_BUFFER) {
      // one registered buffer: its int size would wrap (to a few KiB, or negative)
      throw invalid(
          "stagingSlots x (maxRecordPayload + "
              + SealedLayout.RECORD_OVERHEAD
              + ") must be at most "
              + MAX_BUFFER
              + " bytes (one buffer), got "
              + stagingSlots
              + " x "
              + (maxRecordPayload + SealedLayout.RECORD_OVERHEAD)
              + " = "
              + staging);
    }
    if (maxReadBytes < SealedLayout.OWNER_RECORD_OVERHEAD + 1 || maxReadBytes > MAX_BUFFER) {
      throw invalid(
          "maxReadBytes must be "
              + (SealedLayout.OWNER_RECORD_OVERHEAD + 1)
              + " (one owner record of one byte).."
              + MAX_BUFFER
              + ", got "
              + maxReadBytes);
    }
    if (idleSpins < 0 || idleSpins > 1_000_000) {
      throw invalid("idleSpins must be 0..1000000, got " + idleSpins);
    }
    if (sealingThreads < 0 || sealingThreads > 64) {
      throw invalid("sealingThreads must be 0..64, got " + sealingThreads);
    }
  }

  private static void require(Object value, String name) {
    if (value == null) {
      throw invalid(name + " is required");
    }
  }

  private static void positive(String name, Duration value) {
    require(value, name);
    if (value.isNegative() || value.isZero()) {
      throw invalid(name + " must be positive, got " + value);
    }
    if (value.compareTo(MAX_DURATION) > 0) {
      // past ~292 years a deadline in nanoseconds overflows (ArithmeticException at the first use)
      throw invalid(name + " must be at most " + MAX_DURATION.toDays() + " days, got " + value);
    }
  }

  private static ChannelException invalid(String message) {
    return new ChannelException(ChannelException.Reason.INVALID_ARGUMENT, message);
  }
}
