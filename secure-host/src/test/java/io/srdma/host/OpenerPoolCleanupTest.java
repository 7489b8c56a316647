package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.srdma.verbs.CompletionProgress;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.loopback.LoopbackProvider;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An opener that cannot be made (its plaintext buffer is refused: the AEAD selection forced to an
 * unavailable provider, or no memory) leaves no completion queue open: not the ones made for the
 * openers before it, nor the one made for it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OpenerPoolCleanupTest {
  @Test
  void shouldCloseEveryCompletionQueueWhenAnOpenerCannotBeMade() {
    List<String> events = new ArrayList<>();
    try (DeviceContext real =
        RdmaProviders.firstDevice(LoopbackProvider.NAME).open(new DeviceOptions())) {
      DeviceContext counting = counting(real, events);
      // a negative payload size makes the opener's buffer refuse, after its queue was made
      assertThrows(
          IllegalArgumentException.class,
          () -> OpenerPool.create("t", counting, 2, 16, -1, null, CompletionProgress.POLLER));
    }
    assertEquals(List.of("created", "closed"), events);
  }

  private static DeviceContext counting(DeviceContext real, List<String> events) {
    return (DeviceContext)
        Proxy.newProxyInstance(
            DeviceContext.class.getClassLoader(),
            new Class<?>[] {DeviceContext.class},
            (proxy, m, args) -> {
              Object r = invoke(m, real, args);
              if (m.getName().equals("createCompletionQueue")) {
                events.add("created");
                CompletionQueue cq = (CompletionQueue) r;
                return Proxy.newProxyInstance(
                    CompletionQueue.class.getClassLoader(),
                    new Class<?>[] {CompletionQueue.class},
                    (p2, m2, a2) -> {
                      if (m2.getName().equals("close")) {
                        events.add("closed");
                      }
                      return invoke(m2, cq, a2);
                    });
              }
              return r;
            });
  }

  private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args)
      throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
