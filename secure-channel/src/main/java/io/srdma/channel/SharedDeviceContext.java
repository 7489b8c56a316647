package io.srdma.channel;

import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.RdmaProviders;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device context per process for each provider and device options, shared by every {@link
 * SecureRdmaClient} in it: reference-counted, opened by the first client, closed when the last
 * client closes. Its {@link CompletionLanes} (a few completion queues and their poller threads) go
 * with it: opened with it, closed before it. Each client still has its own protection domain, queue
 * pair and registrations on it. Thread-safe (one lock, held only to open, count and close).
 */
final class SharedDeviceContext implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SharedDeviceContext.class);
  private static final Object LOCK = new Object();
  private static final Map<String, SharedDeviceContext> OPEN = new HashMap<>();

  private final String key;
  private final DeviceContext context;
  private final CompletionLanes lanes;
  private int users; // guarded by LOCK
  private final AtomicBoolean runFallbackSaid = new AtomicBoolean();

  private SharedDeviceContext(String key, DeviceContext context) {
    this.key = key;
    this.context = context;
    try {
      this.lanes = new CompletionLanes(context);
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
  }

  /**
   * A reference to the process's context for {@code provider} and {@code device}, opened if none
   * is; {@link #close()} gives the reference back.
   */
  static SharedDeviceContext acquire(String provider, DeviceOptions device) {
    String key = key(provider, device);
    synchronized (LOCK) {
      SharedDeviceContext s = OPEN.get(key);
      if (s == null) {
        s = new SharedDeviceContext(key, RdmaProviders.firstDevice(provider).open(device));
        OPEN.put(key, s);
        LOG.debug("opened the shared {} device context", provider);
      }
      s.users++;
      return s;
    }
  }

  /** The context. */
  DeviceContext context() {
    return context;
  }

  /** The completion lanes of this context's clients. */
  CompletionLanes lanes() {
    return lanes;
  }

  /**
   * True the first time a client of this context reports its record runs held below their limit by
   * the device (ClientResources#runRecords): said once per context, not per client.
   */
  boolean firstRunFallback() {
    return runFallbackSaid.compareAndSet(false, true);
  }

  /** Clients holding this context now. */
  int users() {
    synchronized (LOCK) {
      return users;
    }
  }

  /** Whether the context for these settings is open now (for tests). */
  static boolean isOpen(String provider, DeviceOptions device) {
    synchronized (LOCK) {
      return OPEN.containsKey(key(provider, device));
    }
  }

  /** Gives one reference back; the last one closes the context. Call once per {@link #acquire}. */
  @Override
  public void close() {
    synchronized (LOCK) {
      if (users == 0) {
        return;
      }
      if (--users > 0) {
        return;
      }
      OPEN.remove(key);
      lanes.close();
      try {
        context.close();
      } catch (RuntimeException e) {
        LOG.warn("closing the shared device context failed: {}", e.getMessage());
      }
    }
  }

  private static String key(String provider, DeviceOptions d) {
    return provider
        + '|'
        + d.transportTimeout()
        + '|'
        + d.rnrTimeout()
        + '|'
        + d.payloadTimeout()
        + '|'
        + d.bindAddress()
        + '|'
        + d.bindPort()
        + '|'
        + d.gidIndex()
        + '|'
        + d.portNumber()
        + '|'
        + d.allowPlainRegionAddresses()
        + '|'
        + d.responderCpus(); // a client asking for pinned responders never shares unpinned ones
  }
}
