package io.srdma.host;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * One session's grant slots: the low 8 bits of a grant's id, named by every write notification of
 * the grant. Slot 0 is never used. A grant that ended is marked so under the same lock, so a
 * notification that names it afterwards finds no live grant; its slot keeps it until a later grant
 * takes the slot, to tell notifications under way when the host ended it ({@link #lateForEnded}).
 * The grant whose record the session's opener has taken is marked ({@link #takeForDelivery}) until
 * the record is delivered or refused, so that a host-side end can wait for it ({@link
 * #awaitDelivered}). Thread-safe: one lock; {@link #hasEnded} reads the volatile flag without it.
 */
final class GrantSlots {
  /** Slots per session (255 grants live at most). */
  static final int SLOTS = 256;

  /** How long after the host ended a grant its notifications may still be under way. */
  static final java.time.Duration LATE_WINDOW = java.time.Duration.ofSeconds(1);

  private final HostGrant[] slots = new HostGrant[SLOTS];
  private int nextSlot = 1;

  /** The grant whose record the opener is opening or delivering, or null (opener writes). */
  private final AtomicReference<HostGrant> delivering = new AtomicReference<>();

  /** The session's opener thread, once it took a record (opener writes). */
  private volatile Thread deliverer;

  /** A free slot, or -1 when every slot holds a live grant. */
  synchronized int reserve() {
    for (int i = 0; i < SLOTS - 1; i++) {
      int s = nextSlot;
      nextSlot = nextSlot == SLOTS - 1 ? 1 : nextSlot + 1;
      if (slots[s] == null || slots[s].ended) {
        slots[s] = null;
        return s;
      }
    }
    return -1;
  }

  synchronized void free(int slot) {
    slots[slot] = null;
  }

  /**
   * Puts {@code grant} into its slot unless the session is ending; checked under the lock the
   * host's end takes to list live grants: either that list holds this grant (and the end revokes
   * it) or the end is seen here, nothing is installed and the caller ends the grant.
   *
   * @return null when installed, else why the session is ending
   */
  synchronized SessionEnd installUnlessEnding(HostGrant grant, AtomicReference<SessionEnd> ending) {
    SessionEnd why = ending.get();
    if (why == null) {
      slots[grant.slot] = grant;
    }
    return why;
  }

  /** The live grant in {@code slot}, or null when the slot is free or its grant ended. */
  synchronized HostGrant live(int slot) {
    HostGrant g = slots[slot];
    return g != null && !g.ended ? g : null;
  }

  /**
   * The opener's: the live grant in {@code slot}, marked as delivering until {@link #delivered}, or
   * null. Marked under the lock that ends grants, so an end either happened first (null here) or
   * finds the mark when it waits ({@link #awaitDelivered}).
   */
  synchronized HostGrant takeForDelivery(int slot) {
    HostGrant g = live(slot);
    Thread t = Thread.currentThread();
    if (deliverer != t) {
      deliverer = t;
    }
    delivering.lazySet(g);
    return g;
  }

  /** The opener's: the record taken last was delivered or refused. */
  void delivered() {
    delivering.lazySet(null);
  }

  /**
   * Waits until no record of {@code g}, which has ended, is being opened or delivered: after this,
   * none of its records is delivered any more. Returns at once on the opener thread itself (a
   * listener that ends the grant of the record it is given).
   *
   * @return false when one was still being delivered after {@code timeoutNanos}
   */
  boolean awaitDelivered(HostGrant g, long timeoutNanos) {
    if (delivering.get() != g || deliverer == Thread.currentThread()) {
      return true;
    }
    long deadline = System.nanoTime() + timeoutNanos;
    for (int spins = 0; delivering.get() == g; spins++) {
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      if (spins < 200) {
        Thread.onSpinWait();
      } else {
        LockSupport.parkNanos(20_000);
      }
    }
    return true;
  }

  /** The live grant with id {@code id}, or null. */
  HostGrant byId(long id) {
    HostGrant g = live((int) (id & 0xff));
    return g != null && g.id == id ? g : null;
  }

  /**
   * Marks {@code g} ended; its slot is free for a later grant (a notification naming it now finds
   * no live grant), and holds {@code g} until then, so that notifications already under way when
   * the host ended it are told from later ones ({@link #lateForEnded}).
   *
   * @param notificationsSeen the session's notifications seen so far, if the host ends it (they may
   *     have notifications under way), or -1 for a RELEASE (its holder drained first)
   * @return false when it had ended already
   */
  synchronized boolean markEnded(HostGrant g, long notificationsSeen) {
    if (g.ended) {
      return false;
    }
    g.ended = true;
    g.endedAtNotification = notificationsSeen;
    g.endedAtNanos = System.nanoTime();
    return true;
  }

  /**
   * Whether a notification naming {@code slot}, the session's {@code seen}th, can be one that was
   * under way when the host ended the slot's grant: within the receives that were posted then
   * ({@code depth}) and within {@link #LATE_WINDOW} of the end.
   */
  synchronized boolean lateForEnded(int slot, long seen, int depth) {
    HostGrant g = slots[slot];
    return g != null
        && g.ended
        && g.endedAtNotification >= 0
        && seen - g.endedAtNotification <= depth
        && System.nanoTime() - g.endedAtNanos <= LATE_WINDOW.toNanos();
  }

  /**
   * Whether {@code g} has ended: a volatile read, without the lock (the opener asks after every
   * record of a run). It is enough: the flag is written once, false to true, under the lock; a read
   * of a volatile field is ordered with its write as the lock's acquire is with its release (JLS
   * 17.4.4), so an end marked before this read is seen, as it was with the lock; and no caller
   * needs anything else the lock guards. A caller that reads the expiry after it ({@link
   * GrantScoper}) still pairs with an end that marks then reads the expiry: all four are
   * synchronization actions, so one of them sees the other's write.
   */
  boolean hasEnded(HostGrant g) {
    return g.ended;
  }

  synchronized List<HostGrant> liveGrants() {
    List<HostGrant> out = new ArrayList<>();
    for (HostGrant g : slots) {
      if (g != null && !g.ended) {
        out.add(g);
      }
    }
    return out;
  }
}
