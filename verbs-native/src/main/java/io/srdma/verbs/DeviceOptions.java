package io.srdma.verbs;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * Settings for opening a device. Each setting has a system property ({@code X_PROP_NAME}) and a
 * default ({@code X_DEFAULT}); setters override both. Call {@link #conclude()} (open does) to
 * validate.
 */
public final class DeviceOptions {
  /** System property: how long a request may wait for its response before RETRY_EXC_ERR. */
  public static final String TRANSPORT_TIMEOUT_PROP_NAME = "srdma.verbs.transportTimeoutMs";

  /** Default transport timeout. */
  public static final Duration TRANSPORT_TIMEOUT_DEFAULT = Duration.ofSeconds(4);

  /** System property: how long a SEND or WRITE_WITH_IMM waits for a receive before RNR error. */
  public static final String RNR_TIMEOUT_PROP_NAME = "srdma.verbs.rnrTimeoutMs";

  /** Default receiver-not-ready budget. */
  public static final Duration RNR_TIMEOUT_DEFAULT = Duration.ofSeconds(2);

  /**
   * System property: soft provider: the longest the responder waits for the next byte of a request
   * payload it has started to receive.
   */
  public static final String PAYLOAD_TIMEOUT_PROP_NAME = "srdma.soft.payloadTimeoutMs";

  /** Default payload stall budget. */
  public static final Duration PAYLOAD_TIMEOUT_DEFAULT = Duration.ofSeconds(2);

  /** System property: the address the soft provider's responder listens on. */
  public static final String BIND_ADDRESS_PROP_NAME = "srdma.soft.bindAddress";

  /** Default responder address: loopback. */
  public static final String BIND_ADDRESS_DEFAULT = "127.0.0.1";

  /** System property: the soft responder's TCP port (0 = any free port). */
  public static final String BIND_PORT_PROP_NAME = "srdma.soft.bindPort";

  /** System property: ibv GID index used for RoCE addressing. */
  public static final String GID_INDEX_PROP_NAME = "srdma.ibv.gidIndex";

  /** Default GID index (1 is the IPv4-mapped RoCE v2 GID on rxe). */
  public static final int GID_INDEX_DEFAULT = 1;

  /**
   * System property: ibv provider: allow registering remotely accessible memory at its virtual
   * address when libibverbs cannot register it at a random I/O virtual address.
   */
  public static final String ALLOW_PLAIN_REGION_ADDRESSES_PROP_NAME =
      "srdma.ibv.allowPlainRegionAddresses";

  /**
   * System property: soft provider: the CPUs its responder threads run on, as a CPU list ({@code
   * 1}, {@code 2-3}); unset: wherever the scheduler puts them.
   */
  public static final String RESPONDER_CPUS_PROP_NAME = "srdma.soft.responderCpus";

  /** System property: ibv port number. */
  public static final String PORT_NUMBER_PROP_NAME = "srdma.ibv.port";

  private Duration transportTimeout =
      Duration.ofMillis(
          Long.getLong(TRANSPORT_TIMEOUT_PROP_NAME, TRANSPORT_TIMEOUT_DEFAULT.toMillis()));
  private Duration rnrTimeout =
      Duration.ofMillis(Long.getLong(RNR_TIMEOUT_PROP_NAME, RNR_TIMEOUT_DEFAULT.toMillis()));
  private Duration payloadTimeout =
      Duration.ofMillis(
          Long.getLong(PAYLOAD_TIMEOUT_PROP_NAME, PAYLOAD_TIMEOUT_DEFAULT.toMillis()));
  private String bindAddress = System.getProperty(BIND_ADDRESS_PROP_NAME, BIND_ADDRESS_DEFAULT);
  private int bindPort = Integer.getInteger(BIND_PORT_PROP_NAME, 0);
  private int gidIndex = Integer.getInteger(GID_INDEX_PROP_NAME, GID_INDEX_DEFAULT);
  private int portNumber = Integer.getInteger(PORT_NUMBER_PROP_NAME, 1);
  private boolean allowPlainRegionAddresses =
      Boolean.getBoolean(ALLOW_PLAIN_REGION_ADDRESSES_PROP_NAME);
  private String responderCpusText = System.getProperty(RESPONDER_CPUS_PROP_NAME);
  private CpuSet responderCpus;

  /** Options from system properties and defaults. */
  public DeviceOptions() {}

  /** Transport timeout: the longest a request waits for its response. */
  public Duration transportTimeout() {
    return transportTimeout;
  }

  /** Sets the transport timeout. */
  public DeviceOptions transportTimeout(Duration value) {
    this.transportTimeout = value;
    return this;
  }

  /** Receiver-not-ready budget. */
  public Duration rnrTimeout() {
    return rnrTimeout;
  }

  /** Sets the receiver-not-ready budget. */
  public DeviceOptions rnrTimeout(Duration value) {
    this.rnrTimeout = value;
    return this;
  }

  /**
   * Soft provider: payload stall budget. A WRITE or SEND whose payload brings no new byte for this
   * long is answered with a NAK ({@code REM_OP_ERR}) and its QP goes to ERROR, so a peer cannot
   * hold a request open.
   */
  public Duration payloadTimeout() {
    return payloadTimeout;
  }

  /** Sets the soft responder's payload stall budget. */
  public DeviceOptions payloadTimeout(Duration value) {
    this.payloadTimeout = value;
    return this;
  }

  /** Soft provider: responder listen address. */
  public String bindAddress() {
    return bindAddress;
  }

  /** Sets the soft responder's listen address. */
  public DeviceOptions bindAddress(String value) {
    this.bindAddress = value;
    return this;
  }

  /** Soft provider: responder TCP port, 0 for any. */
  public int bindPort() {
    return bindPort;
  }

  /** Sets the soft responder's port. */
  public DeviceOptions bindPort(int value) {
    this.bindPort = value;
    return this;
  }

  /** ibv provider: GID index. */
  public int gidIndex() {
    return gidIndex;
  }

  /** Sets the GID index. */
  public DeviceOptions gidIndex(int value) {
    this.gidIndex = value;
    return this;
  }

  /** ibv provider: port number. */
  public int portNumber() {
    return portNumber;
  }

  /** Sets the port number. */
  public DeviceOptions portNumber(int value) {
    this.portNumber = value;
    return this;
  }

  /**
   * ibv provider: whether a region with remote access may be registered at its process virtual
   * address (plain {@code ibv_reg_mr}) when {@code ibv_reg_mr_iova2} is missing. Default false:
   * such a registration is refused with {@code NOT_SUPPORTED}, because its R_Key may carry as few
   * as 8 random bits (rxe) and its address is guessable (docs/data-plane.md).
   */
  public boolean allowPlainRegionAddresses() {
    return allowPlainRegionAddresses;
  }

  /** Allows (true) plain registration of remotely accessible regions; see the getter. */
  public DeviceOptions allowPlainRegionAddresses(boolean value) {
    this.allowPlainRegionAddresses = value;
    return this;
  }

  /**
   * Soft provider: the CPUs its responder threads (the ones that take remote writes into memory)
   * are pinned to, or null to leave them to the scheduler (the default). Where the writing threads
   * run on other CPUs, this keeps a host's receive path off their cores: on 2 vCPUs it moved a
   * sealed 1 MiB stream by +30 % (docs/performance.md, session 28). A set that cannot be honoured
   * exactly ({@link CpuAffinity}) fails the device's open; so does any set off 64-bit Linux.
   */
  public CpuSet responderCpus() {
    if (responderCpusText != null) {
      try {
        responderCpus = CpuSet.parse(responderCpusText);
      } catch (IllegalArgumentException e) {
        throw invalid(RESPONDER_CPUS_PROP_NAME + ": " + e.getMessage());
      }
      responderCpusText = null;
    }
    return responderCpus;
  }

  /** Sets the soft responder threads' CPUs; null leaves them unpinned. */
  public DeviceOptions responderCpus(CpuSet value) {
    this.responderCpus = value;
    this.responderCpusText = null;
    return this;
  }

  /**
   * Validates the settings.
   *
   * @return this
   * @throws VerbsException INVALID_ARGUMENT naming the bad setting
   */
  public DeviceOptions conclude() {
    requirePositive(transportTimeout, "transportTimeout");
    requirePositive(rnrTimeout, "rnrTimeout");
    requirePositive(payloadTimeout, "payloadTimeout");
    if (bindPort < 0 || bindPort > 65535) {
      throw invalid("bindPort " + bindPort + " is not a TCP port");
    }
    if (gidIndex < 0 || portNumber < 1 || portNumber > 255) {
      throw invalid("gidIndex must be >= 0 and portNumber in 1..255");
    }
    CpuSet unused = responderCpus(); // a bad property fails here
    try {
      InetAddress.getByName(bindAddress);
    } catch (UnknownHostException e) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "open_device",
          "bindAddress '" + bindAddress + "' does not resolve",
          e);
    }
    return this;
  }

  private static void requirePositive(Duration d, String name) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw invalid(name + " must be positive");
    }
  }

  private static VerbsException invalid(String message) {
    return new VerbsException(VerbsException.Reason.INVALID_ARGUMENT, "open_device", message);
  }
}
