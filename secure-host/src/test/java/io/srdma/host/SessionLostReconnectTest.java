package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * "There is no automatic reconnect: connect again" (sdk.md): an application that connects again
 * from its session-lost listener, with as many clients in the process as the client runtime has
 * workers, all losing their sessions at once (a host restart, or a host that closes them), must get
 * its new sessions. The listeners run on the shared workers, and a connect waits there for a TLS
 * handshake whose delegated tasks (certificate checks) need a worker too.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SessionLostReconnectTest {
  @TempDir Path dir;

  @Test
  void shouldReconnectFromTheSessionLostListenersOfEveryClientAtOnce() throws Exception {
    Field w = Class.forName("io.srdma.channel.ClientRuntime").getDeclaredField("WORKERS");
    w.setAccessible(true);
    int n = w.getInt(null);
    ConcurrentLinkedQueue<SecureRdmaClient> reconnected = new ConcurrentLinkedQueue<>();
    try (ChannelRig rig = new ChannelRig(dir)) {
      List<SecureRdmaClient> clients = new ArrayList<>();
      List<CompletableFuture<SecureRdmaClient>> again = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        ClientOptions o = rig.options("acme", "trainer-" + i);
        SecureRdmaClient c = rig.client("acme", "trainer-" + i);
        CompletableFuture<SecureRdmaClient> f = new CompletableFuture<>();
        c.onSessionLost(
            e -> {
              try {
                SecureRdmaClient r = SecureRdmaClient.connect(o);
                reconnected.add(r);
                f.complete(r);
              } catch (RuntimeException x) {
                f.completeExceptionally(x);
              }
            });
        clients.add(c);
        again.add(f);
      }
      List<HostSession> sessions = new ArrayList<>();
      for (SecureRdmaClient c : clients) {
        sessions.add(rig.session(c));
      }
      for (HostSession s : sessions) {
        s.proxy.close(0); // the host ends every session at once
      }
      for (CompletableFuture<SecureRdmaClient> f : again) {
        SecureRdmaClient r =
            f.get(ChannelRig.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(r.isOpen());
      }
    } finally {
      for (SecureRdmaClient r : reconnected) {
        r.close();
      }
    }
  }
}
