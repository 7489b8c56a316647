package io.srdma.testsupport;

import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.host.HostOptions;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A host for tests of other modules: a throw-away deployment CA in {@code dir/ca}, an audit log in
 * {@code dir/audit.jsonl}, a {@link RegionHost} named {@value #HOST_NAME} with the sample policy on
 * the provider under test, and tenant clients pinned to it that are closed with the rig.
 *
 * <pre>{@code
 * try (DevHost rig = DevHost.start(dir, o -> o.policy(myPolicy))) {
 *   rig.host().registerRegion("acme", "kvcache", 1 << 20);
 *   SecureRdmaClient c = rig.client("acme", "trainer-1");
 *   ...
 * }
 * }</pre>
 *
 * <p>The provider is {@code -Dsrdma.test.provider} ({@code soft} by default); every deadline the
 * rig sets is multiplied by {@code -Dsrdma.test.timeScale} (1 by default; 10 in the Soft-RoCE
 * guest). Not thread-safe: build and close it on the test's thread; the host and clients it hands
 * out are as thread-safe as ever.
 *
 * <p>secure-host's own tests use their {@code ChannelRig}: this module depends on secure-host, so
 * they cannot use it.
 */
public final class DevHost implements AutoCloseable {
  /** The host's name: its certificate says {@code srdma://host/host-1}. */
  public static final String HOST_NAME = "host-1";

  /** The provider under test: {@code -Dsrdma.test.provider=ibv} in the Soft-RoCE guest. */
  public static final String PROVIDER = System.getProperty("srdma.test.provider", "soft");

  /** Multiplies every deadline the rig sets ({@code -Dsrdma.test.timeScale=10} under emulation). */
  public static final int TIME_SCALE = Integer.getInteger("srdma.test.timeScale", 1);

  private final Path dir;
  private final DeploymentCa ca;
  private final AuditLog auditLog;
  private final RegionHost host;
  private final List<SecureRdmaClient> clients = new ArrayList<>();

  private DevHost(Path dir, DeploymentCa ca, AuditLog auditLog, RegionHost host) {
    this.dir = dir;
    this.ca = ca;
    this.auditLog = auditLog;
    this.host = host;
  }

  /** A host with the sample policy and the rig's defaults. */
  public static DevHost start(Path dir) throws Exception {
    return start(dir, o -> {});
  }

  /**
   * A host whose options {@code tune} may change after the rig's defaults (credential, trust,
   * sample policy, audit, provider, scaled handshake and request timeouts) are set.
   */
  public static DevHost start(Path dir, Consumer<HostOptions> tune) throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    AuditLog log = AuditLog.open(dir.resolve("audit.jsonl"));
    try {
      HostOptions o =
          new HostOptions()
              .credential(
                  ca.issuePeer(
                      PeerIdentity.of(PeerIdentity.HOST_TENANT, HOST_NAME), Duration.ofDays(1)))
              .trust(ca.trust())
              .policy(new PolicyLoader().loadSample())
              .audit(new AuditTrail(log))
              .provider(PROVIDER)
              .handshakeTimeout(scaled(Duration.ofSeconds(5)))
              .requestTimeout(scaled(Duration.ofSeconds(5)));
      tune.accept(o);
      return new DevHost(dir, ca, log, RegionHost.start(o));
    } catch (Exception | Error e) {
      log.close();
      throw e;
    }
  }

  /** {@code d} times {@link #TIME_SCALE}. */
  public static Duration scaled(Duration d) {
    return d.multipliedBy(TIME_SCALE);
  }

  /** The text of the sample policy ({@link PolicyLoader#SAMPLE_RESOURCE}). */
  public static String samplePolicyText() {
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            "no " + PolicyLoader.SAMPLE_RESOURCE + " on the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The rig's directory. */
  public Path dir() {
    return dir;
  }

  /** The deployment CA (its files are in {@code dir/ca}). */
  public DeploymentCa ca() {
    return ca;
  }

  /** The host's audit log. */
  public AuditLog auditLog() {
    return auditLog;
  }

  /** The host. */
  public RegionHost host() {
    return host;
  }

  /** A new tenant peer certificate {@code srdma://tenant/peer}, valid for a day. */
  public Credential credential(String tenant, String peer) {
    return ca.issuePeer(PeerIdentity.of(tenant, peer), Duration.ofDays(1));
  }

  /** Options of a client of {@code tenant/peer} pinned to this host, deadlines scaled. */
  public ClientOptions clientOptions(String tenant, String peer) {
    return new ClientOptions()
        .credential(credential(tenant, peer))
        .trust(ca.trust())
        .host(host.address())
        .hostName(HOST_NAME)
        .provider(PROVIDER)
        .connectTimeout(scaled(Duration.ofSeconds(5)))
        .requestTimeout(scaled(Duration.ofSeconds(5)));
  }

  /** A connected client of {@code tenant/peer}, closed with the rig. */
  public SecureRdmaClient client(String tenant, String peer) {
    SecureRdmaClient c = SecureRdmaClient.connect(clientOptions(tenant, peer));
    clients.add(c);
    return c;
  }

  /** The audit log's text so far. */
  public String audit() throws IOException {
    return Files.readString(auditLog.file(), StandardCharsets.UTF_8);
  }

  /** Closes the clients it handed out, the host and the audit log. */
  @Override
  public void close() {
    for (SecureRdmaClient c : clients) {
      c.close();
    }
    host.close();
    auditLog.close();
  }
}
