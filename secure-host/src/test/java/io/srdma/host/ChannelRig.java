package io.srdma.host;

import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/** A host on the soft provider with the sample policy, a dev CA and clients of both tenants. */
final class ChannelRig implements AutoCloseable {
  static final int REGION_SIZE = 1 << 20;

  /** The provider under test: {@code -Dsrdma.test.provider=ibv} in the Soft-RoCE guest. */
  static final String PROVIDER = System.getProperty("srdma.test.provider", "soft");

  /**
   * Multiplies every deadline: the Soft-RoCE guest runs under emulation, many times slower ({@code
   * -Dsrdma.test.timeScale=10}).
   */
  static final int TIME_SCALE = Integer.getInteger("srdma.test.timeScale", 1);

  static Duration scaled(Duration d) {
    return d.multipliedBy(TIME_SCALE);
  }

  final Path dir;
  final DeploymentCa ca;
  final AuditLog auditLog;
  final RegionHost host;
  final HostedRegion acmeKv;
  final HostedRegion globexFeatures;
  final List<byte[]> acmeRecords = new CopyOnWriteArrayList<>();
  private final List<SecureRdmaClient> clients = new ArrayList<>();

  ChannelRig(Path dir) throws Exception {
    this(dir, o -> {});
  }

  ChannelRig(Path dir, Consumer<HostOptions> tune) throws Exception {
    this.dir = dir;
    ca = DeploymentCa.init(dir.resolve("ca"), null);
    auditLog = AuditLog.open(dir.resolve("audit.jsonl"));
    HostOptions o =
        new HostOptions()
            .credential(
                ca.issuePeer(PeerIdentity.of(RegionHost.HOST_TENANT, "host-1"), Duration.ofDays(1)))
            .trust(ca.trust())
            .policy(new PolicyLoader().loadSample())
            .audit(new AuditTrail(auditLog))
            .provider(PROVIDER)
            .handshakeTimeout(scaled(Duration.ofSeconds(5)))
            .firstRecordTimeout(scaled(Duration.ofSeconds(2)))
            .requestTimeout(scaled(Duration.ofSeconds(5)));
    tune.accept(o);
    host = RegionHost.start(o);
    acmeKv = host.registerRegion("acme", "kvcache", REGION_SIZE);
    globexFeatures = host.registerRegion("globex", "features", REGION_SIZE);
    acmeKv.onRecord(
        r -> {
          byte[] b = new byte[r.payload().remaining()];
          r.payload().get(b);
          acmeRecords.add(b);
        });
  }

  Credential credential(String tenant, String peer) {
    return ca.issuePeer(PeerIdentity.of(tenant, peer), Duration.ofDays(1));
  }

  ClientOptions options(String tenant, String peer) {
    return new ClientOptions()
        .credential(credential(tenant, peer))
        .trust(ca.trust())
        .host(host.address())
        .hostName("host-1")
        .provider(PROVIDER)
        .connectTimeout(scaled(Duration.ofSeconds(5)))
        .requestTimeout(scaled(Duration.ofSeconds(5)));
  }

  SecureRdmaClient client(String tenant, String peer) {
    return track(SecureRdmaClient.connect(options(tenant, peer)));
  }

  /** The host's session of client {@code c} (tests that reach into the host). */
  @SuppressWarnings("unchecked")
  HostSession session(SecureRdmaClient c) throws ReflectiveOperationException {
    java.lang.reflect.Field f = RegionHost.class.getDeclaredField("sessions");
    f.setAccessible(true);
    for (HostSession s : ((java.util.Map<HostSession, ?>) f.get(host)).keySet()) {
      if (s.hexId().equals(c.sessionId())) {
        return s;
      }
    }
    throw new AssertionError("no host session for " + c.sessionId());
  }

  SecureRdmaClient track(SecureRdmaClient c) {
    clients.add(c);
    return c;
  }

  String audit() throws Exception {
    return Files.readString(auditLog.file(), StandardCharsets.UTF_8);
  }

  static long checksum(HostedRegion r) {
    byte[] all = new byte[(int) r.size()];
    r.copy(0, all);
    CRC32C crc = new CRC32C();
    crc.update(all);
    return crc.getValue();
  }

  static ByteBuffer bytes(int n, int seed) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i * 31 + seed);
    }
    return ByteBuffer.wrap(b);
  }

  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    Duration limit = scaled(Duration.ofSeconds(10));
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + limit + ": " + what);
      }
      Thread.sleep(5);
    }
  }

  @Override
  public void close() {
    for (SecureRdmaClient c : clients) {
      c.close();
    }
    host.close();
    auditLog.close();
  }
}
