package io.srdma.policy;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reloads a policy file into a {@link GrantAuthority} when it changes on disk (a daemon thread
 * named {@value #THREAD_NAME}) or when {@link #reload()} is called (console, CLI). A file with
 * errors is rejected whole and the policy in force stays, and the listener is told (so it can audit
 * the failure); an unchanged file (same SHA-256) is not reinstalled. Reloads are serialized. The
 * watch thread survives any file: a refused or failed reload never stops it, and the next valid
 * edit is applied.
 */
public final class PolicyWatcher implements AutoCloseable {
  /** The name of the watch thread. */
  public static final String THREAD_NAME = "srdma-policy-watch";

  private static final Logger LOG = LoggerFactory.getLogger(PolicyWatcher.class);
  private static final long POLL_MS = 200;
  private static final long QUIET_MS = 100;
  private static final long JOIN_MS = 2_000;

  /** Told about every reload, from the thread that did it. Must not throw. */
  public interface Listener {
    /**
     * A new policy is in force.
     *
     * @param result the change, with the live grants it forbids (revoke them)
     */
    void reloaded(ReloadResult result);

    /**
     * A reload was refused; the previous policy stays in force.
     *
     * @param error why, a {@link PolicyRejectedException} for file errors
     */
    void rejected(PolicyException error);
  }

  private final Path file;
  private final PolicyLoader loader;
  private final GrantAuthority authority;
  private final Listener listener;
  private final ReentrantLock reloadLock = new ReentrantLock();
  private final WatchService watch;
  private final Thread thread;
  private volatile boolean running = true;

  private PolicyWatcher(
      Path file, PolicyLoader loader, GrantAuthority authority, Listener listener, boolean watch)
      throws IOException {
    this.file = file.toAbsolutePath();
    this.loader = loader;
    this.authority = authority;
    this.listener = listener;
    if (watch) {
      this.watch = FileSystems.getDefault().newWatchService();
      this.file
          .getParent()
          .register(
              this.watch,
              StandardWatchEventKinds.ENTRY_CREATE,
              StandardWatchEventKinds.ENTRY_MODIFY);
      this.thread = new Thread(this::run, THREAD_NAME);
      this.thread.setDaemon(true);
    } else {
      this.watch = null;
      this.thread = null;
    }
  }

  /**
   * Starts watching a file.
   *
   * @param file the policy file the authority's policy came from
   * @param loader the loader
   * @param authority the authority to install new policies in
   * @param listener told about each reload
   * @return the running watcher; close it to stop
   * @throws PolicyException category IO if the directory cannot be watched
   */
  public static PolicyWatcher start(
      Path file, PolicyLoader loader, GrantAuthority authority, Listener listener) {
    PolicyWatcher w = create(file, loader, authority, listener, true);
    w.thread.start();
    return w;
  }

  /**
   * A watcher that only reloads on {@link #reload()}, without a thread.
   *
   * @param file the policy file
   * @param loader the loader
   * @param authority the authority to install new policies in
   * @param listener told about each reload
   * @return the watcher
   */
  public static PolicyWatcher manual(
      Path file, PolicyLoader loader, GrantAuthority authority, Listener listener) {
    return create(file, loader, authority, listener, false);
  }

  private static PolicyWatcher create(
      Path file, PolicyLoader loader, GrantAuthority authority, Listener listener, boolean watch) {
    try {
      return new PolicyWatcher(
          Objects.requireNonNull(file, "file"),
          Objects.requireNonNull(loader, "loader"),
          Objects.requireNonNull(authority, "authority"),
          Objects.requireNonNull(listener, "listener"),
          watch);
    } catch (IOException e) {
      throw new PolicyException(PolicyException.Category.IO, "cannot watch " + file + ": " + e, e);
    }
  }

  /**
   * Loads the file and installs it if valid and changed.
   *
   * @return the change; no forbidden grants and the same policy twice if the file is unchanged
   * @throws PolicyRejectedException if the file has errors (the policy in force stays)
   * @throws PolicyException category IO if it cannot be read
   */
  public ReloadResult reload() {
    reloadLock.lock();
    try {
      Policy next;
      try {
        next = loader.load(file);
      } catch (PolicyException e) {
        listener.rejected(e);
        throw e;
      } catch (RuntimeException | StackOverflowError e) {
        // the loader's limits make this unreachable; a failure of the loader itself is still a
        // refused reload, reported and audited like any other, never a dead watcher
        PolicyException refused =
            new PolicyException(
                PolicyException.Category.INVALID_POLICY,
                "policy file " + file + " could not be read: " + e.getClass().getSimpleName(),
                e);
        listener.rejected(refused);
        throw refused;
      }
      Policy current = authority.policy();
      if (next.sha256().equals(current.sha256())) {
        return new ReloadResult(current, current, java.util.List.of());
      }
      ReloadResult r = authority.reload(next);
      listener.reloaded(r);
      return r;
    } finally {
      reloadLock.unlock();
    }
  }

  /** Stops the watch thread (bounded wait) and releases the watch. Idempotent. */
  @Override
  public void close() {
    running = false;
    if (thread == null) {
      return;
    }
    thread.interrupt();
    try {
      thread.join(JOIN_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      watch.close();
    } catch (IOException e) {
      LOG.warn("closing policy watch of {}: {}", file, e.toString());
    }
  }

  private void run() {
    try {
      while (running) {
        WatchKey key = watch.poll(POLL_MS, TimeUnit.MILLISECONDS);
        if (key == null || !concernsFile(key)) {
          continue;
        }
        // editors write in bursts: wait until the directory is quiet
        WatchKey more;
        while ((more = watch.poll(QUIET_MS, TimeUnit.MILLISECONDS)) != null) {
          more.pollEvents();
          more.reset();
        }
        if (Files.exists(file)) {
          reloadQuietly();
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // closing
    }
  }

  private boolean concernsFile(WatchKey key) {
    boolean hit = false;
    for (WatchEvent<?> e : key.pollEvents()) {
      if (e.kind() == StandardWatchEventKinds.OVERFLOW || file.getFileName().equals(e.context())) {
        hit = true;
      }
    }
    key.reset();
    return hit;
  }

  // The watch thread must outlive any file and any listener: whatever one reload throws, the
  // next change is still picked up.
  private void reloadQuietly() {
    try {
      reload();
    } catch (PolicyException e) {
      LOG.warn("policy reload of {} refused, the policy in force stays: {}", file, e.getMessage());
    } catch (Throwable e) {
      LOG.error("policy reload of {} failed; still watching", file, e);
    }
  }
}
