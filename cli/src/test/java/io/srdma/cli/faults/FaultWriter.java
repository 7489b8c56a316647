package io.srdma.cli.faults;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.verbs.DeviceOptions;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A tenant writer for the fault tests, run in its own network namespace. It writes records {@link
 * FaultPayload#make numbered} {@code 0, 1, 2, ...} with up to four asynchronous writes in flight
 * and every fifth write blocking, and prints one line per operation:
 *
 * <ul>
 *   <li>{@code OP seq OK ms} or {@code OP seq FAIL REASON ms} (a {@link ChannelException}), {@code
 *       OP seq UNTYPED class ms} (any other exception) or {@code OP seq HANG ms} (no outcome within
 *       {@link #DEADLINE});
 *   <li>{@code CONNECTED n}, {@code CONNECT_FAIL REASON ms}, {@code GRANT id};
 *   <li>after a reconnect: {@code PROBE status}, a raw RDMA WRITE with the previous session's grant
 *       (address and rkey) on a fresh connection, before any new grant exists.
 * </ul>
 *
 * <p>After a failure it closes the client and connects again until {@code SECONDS} after its first
 * connection are over or the file {@code STOPFILE} exists; it never rewrites a sequence number.
 * Arguments: {@code DIR HOST:PORT TENANT PEER REGION TAG SECONDS STOPFILE}.
 */
public final class FaultWriter {
  /**
   * Multiplies every timeout and deadline of the fault tests, in all their JVMs: the Soft-RoCE
   * guest runs under emulation, many times slower ({@code -Dsrdma.test.timeScale=N},
   * docs/faults.md).
   */
  static final int TIME_SCALE = Integer.getInteger("srdma.test.timeScale", 1);

  /** Client request timeout (and the host's): 2 s, scaled. */
  static final Duration REQUEST_TIMEOUT = scaled(Duration.ofSeconds(2));

  /** Longest any operation may take: twice the request timeout (blocking calls) plus slack. */
  static final Duration DEADLINE =
      REQUEST_TIMEOUT.multipliedBy(2).plus(scaled(Duration.ofSeconds(3)));

  private static final int PAYLOAD = 2000;
  // 16 MiB of distinct places, written at most every 2 ms: a writer laps the grant only after
  // 16 s, so a host that opens records late (loaded machine) still finds each one in its place.
  private static final int SLOT = 2048;
  private static final int SLOTS = 8192;

  private FaultWriter() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    String[] hp = args[1].split(":");
    InetSocketAddress hostAddress = new InetSocketAddress(hp[0], Integer.parseInt(hp[1]));
    String tenant = args[2];
    String peer = args[3];
    String region = args[4];
    String tag = args[5];
    long runNanos = TimeUnit.SECONDS.toNanos(Long.parseLong(args[6]));
    long endAt = Long.MAX_VALUE; // set on the first connection: start-up may be slow (emulation)
    Path stopFile = Path.of(args[7]);
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    ClientOptions options =
        new ClientOptions()
            .credential(
                Credential.load(
                    dir.resolve("certs/" + peer + ".crt"),
                    dir.resolve("certs/" + peer + ".key"),
                    null))
            .trust(DeploymentTrust.load(dir.resolve("ca/ca.crt"), dir.resolve("ca/crl.pem")))
            .host(hostAddress)
            .hostName("fault-host")
            .device(new DeviceOptions())
            .connectTimeout(REQUEST_TIMEOUT)
            .requestTimeout(REQUEST_TIMEOUT)
            .keepalive(Duration.ofSeconds(1));
    long seq = 0;
    int connections = 0;
    long ok = 0;
    long failed = 0;
    RemoteGrant previous = null;
    while (System.nanoTime() < endAt && !Files.exists(stopFile)) {
      SecureRdmaClient client;
      long t0 = System.nanoTime();
      try {
        if (previous != null) {
          try (SecureRdmaClient probe = SecureRdmaClient.connect(options)) {
            byte[] junk = new byte[64];
            out.println(
                "PROBE "
                    + AttackProbe.write(
                        probe,
                        AttackProbe.remoteAddress(previous),
                        AttackProbe.rkey(previous),
                        junk,
                        junk.length,
                        AttackProbe.immediate(previous, 0)));
          }
        }
        client = SecureRdmaClient.connect(options);
      } catch (ChannelException e) {
        out.println("CONNECT_FAIL " + e.reason() + " " + ms(t0));
        Thread.sleep(300);
        continue;
      }
      connections++;
      if (connections == 1) {
        endAt = System.nanoTime() + runNanos;
      }
      out.println("CONNECTED " + connections);
      try {
        RemoteGrant g;
        try {
          g =
              client.grant(
                  region, EnumSet.of(Access.WRITE), 0, SLOTS * SLOT, Duration.ofMinutes(5));
        } catch (ChannelException e) {
          out.println("GRANT_FAIL " + e.reason() + " " + ms(t0));
          continue;
        }
        previous = g;
        out.println("GRANT " + g.id());
        ArrayDeque<Op> inFlight = new ArrayDeque<>();
        boolean broken = false;
        while (!broken && System.nanoTime() < endAt && !Files.exists(stopFile)) {
          long s = seq++;
          Thread.sleep(2);
          ByteBuffer data = ByteBuffer.wrap(FaultPayload.make(tag, s, PAYLOAD));
          long offset = (s % SLOTS) * SLOT;
          long start = System.nanoTime();
          if (s % 5 == 4) {
            while (!inFlight.isEmpty()) {
              broken |= !finish(inFlight.poll(), out);
            }
            try {
              g.writeBlocking(offset, data);
              out.println("OP " + s + " OK " + ms(start));
            } catch (ChannelException e) {
              out.println("OP " + s + " FAIL " + e.reason() + " " + ms(start));
              broken = true;
            } catch (RuntimeException e) {
              out.println("OP " + s + " UNTYPED " + e.getClass().getName() + " " + ms(start));
              broken = true;
            }
          } else {
            CompletableFuture<Void> f;
            try {
              f = g.write(offset, data).toCompletableFuture();
            } catch (RuntimeException e) {
              f = CompletableFuture.failedFuture(e);
            }
            inFlight.add(new Op(s, start, f));
            if (inFlight.size() >= 4) {
              broken |= !finish(inFlight.poll(), out);
            }
          }
        }
        while (!inFlight.isEmpty()) {
          broken |= !finish(inFlight.poll(), out);
        }
        if (broken) {
          Thread.sleep(300);
        } else {
          // Stopping cleanly: give the host time to open what it was sent before CLOSE. A host
          // ends the session on CLOSE at once and drops write notifications its receiver has not
          // handled yet, so a write reported OK just before close() can go unopened
          // (docs/faults.md, "Findings").
          Thread.sleep(1500);
        }
      } finally {
        long c0 = System.nanoTime();
        client.close();
        out.println("CLOSED " + ms(c0));
      }
    }
    out.println("END " + seq);
    System.exit(0);
  }

  private record Op(long seq, long start, CompletableFuture<Void> future) {}

  /** Waits for one operation's outcome and prints it; false when it failed. */
  private static boolean finish(Op op, PrintStream out) throws InterruptedException {
    long left = DEADLINE.toNanos() - (System.nanoTime() - op.start());
    try {
      op.future().get(Math.max(0, left), TimeUnit.NANOSECONDS);
      out.println("OP " + op.seq() + " OK " + ms(op.start()));
      return true;
    } catch (TimeoutException e) {
      out.println("OP " + op.seq() + " HANG " + ms(op.start()));
      return false;
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof ChannelException ce) {
        out.println("OP " + op.seq() + " FAIL " + ce.reason() + " " + ms(op.start()));
      } else {
        out.println("OP " + op.seq() + " UNTYPED " + c.getClass().getName() + " " + ms(op.start()));
      }
      return false;
    }
  }

  static Duration scaled(Duration d) {
    return d.multipliedBy(TIME_SCALE);
  }

  private static long ms(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }
}
