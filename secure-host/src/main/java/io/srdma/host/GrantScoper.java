package io.srdma.host;

import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.DenyReason;
import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.GrantRequestFlyweight;
import io.srdma.channel.protocol.Operations;
import io.srdma.channel.protocol.RevokeReason;
import io.srdma.channel.record.RegionKeyMaterial;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.Decision;
import io.srdma.policy.LiveGrant;
import io.srdma.policy.Operation;
import io.srdma.policy.ReloadResult;
import io.srdma.verbs.VerbsException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session's grants: the policy's decision on a GRANT_REQUEST, the grant scoped on the device
 * ({@link GrantBinder}: a type-2 window bound to the session's queue pair, or a memory region over
 * exactly the range), the GRANT; and every end of a grant (RELEASE, revocation, policy change,
 * expiry, session end): the window invalidated first, then the policy told, the region key rotated
 * for a READ grant, the end audited and the holder told. {@link #request} and {@link #release} run
 * on the session's thread; {@link #end}, {@link #tellRevoked} and {@link #sendRegionKey} are
 * thread-safe.
 */
final class GrantScoper {
  private static final Logger LOG = LoggerFactory.getLogger(GrantScoper.class);

  private final HostSession s;
  private final HostContext ctx;

  /**
   * Held from a grant's end until its REVOKE notice is written (or, for an expiry, queued on the
   * timer): a queue pair that fails because a write raced the invalidation ends the session only
   * after that notice ({@link #afterNotices}), so the holder learns the grant was revoked rather
   * than only that its session closed.
   */
  private final Object noticeLock = new Object();

  private final GrantRequestBudget budget = new GrantRequestBudget(System.nanoTime());
  private final GrantBinder binder;

  GrantScoper(HostSession session) {
    this.s = session;
    this.ctx = session.ctx;
    this.binder = new GrantBinder(session);
  }

  /** A GRANT_REQUEST: decided, scoped, answered with GRANT or GRANT_DENIED. */
  void request(Frame f) throws IOException {
    GrantRequestFlyweight req = f.grantRequest();
    String region = req.region();
    int ops = req.operations();
    Set<Operation> operations = EnumSet.noneOf(Operation.class);
    if (Operations.includesRead(ops)) {
      operations.add(Operation.READ);
    }
    if ((ops & Operations.WRITE) != 0) {
      operations.add(Operation.WRITE);
    }
    long offset = req.offset();
    long length = req.length();
    Duration ttl = Duration.ofMillis(req.ttlMillis());
    SessionEnd because = s.ending.get();
    if (because != null) {
      // the host is ending this session (certificate revoked or expired, lifetime, rejections):
      // its end may wait on the watchdog thread behind other sessions' ends; nothing new meanwhile
      deny(f, DenyReason.NOT_PERMITTED, "the session is ending: " + because.token());
      return;
    }
    if (!budget.tryTake(System.nanoTime())) {
      deny(
          f,
          DenyReason.RATE_LIMITED,
          "more than "
              + GrantRequestBudget.PER_SECOND
              + " grant requests a second (bursts of "
              + GrantRequestBudget.BURST
              + ") on this session");
      return;
    }
    int slot = s.slots.reserve();
    if (slot < 0) {
      deny(
          f,
          DenyReason.RESOURCE_EXHAUSTED,
          "this session holds " + (GrantSlots.SLOTS - 1) + " grants");
      return;
    }
    long id = ((ctx.random().nextLong() >>> 9) << 8) | slot;
    String grantId = Long.toString(id);
    Decision d =
        ctx.authority()
            .issue(grantId, s.identity, s.tenant, region, operations, offset, length, ttl);
    if (!d.allowed()) {
      s.slots.free(slot);
      if (budget.auditDenial()) {
        s.audit.decided(d);
      }
      deny(f, DenyReason.valueOf(d.reason().name()), d.detail());
      return;
    }
    HostedRegion hosted = ctx.tables().hostedRegion(s.tenant, region);
    if (hosted == null || offset + length > hosted.size()) {
      ctx.authority().release(grantId);
      s.slots.free(slot);
      String why =
          hosted == null
              ? "region " + region + " is not registered on this host"
              : "range ends at "
                  + (offset + length)
                  + ", past the "
                  + hosted.size()
                  + " bytes registered";
      if (budget.auditDenial()) {
        s.audit.decided(denied(d, why));
      }
      deny(f, hosted == null ? DenyReason.REGION_UNAVAILABLE : DenyReason.OUT_OF_BOUNDS, why);
      return;
    }
    LiveGrant live =
        new LiveGrant(
            grantId,
            s.identity,
            s.tenant,
            region,
            operations,
            offset,
            length,
            d.effectiveTtl(),
            Instant.now(),
            d.role());
    HostGrant grant;
    try {
      grant = binder.bind(id, slot, live, hosted);
    } catch (VerbsException e) {
      ctx.authority().release(grantId);
      s.slots.free(slot);
      LOG.warn("grant {} for {} could not be scoped: {}", id, s.identity, e.getMessage());
      deny(f, DenyReason.RESOURCE_EXHAUSTED, "the device could not scope the grant");
      return;
    }
    // Audited, counted and listed before it is installed in its slot, where the session's end
    // looks for it: an end that finds it there finds it listed and ends it; an end that came first
    // is seen by the install, and the grant ends here, the same way. (Installed first, an end on
    // the watchdog could take it from its slot before it was listed: listed afterwards, it stayed
    // listed and counted for ever, and audited granted after its revocation.)
    try {
      s.audit.granted(d, grantId);
    } catch (RuntimeException e) {
      ctx.authority().release(grantId);
      s.slots.free(slot);
      GrantBinder.discard(grant); // its R_Key was never sent: nobody can have used it
      throw e;
    }
    hosted.liveGrants.incrementAndGet();
    ctx.tables().grantIssued(grant);
    SessionEnd endedMeanwhile = s.slots.installUnlessEnding(grant, s.ending);
    if (endedMeanwhile != null) {
      end(grant, RevokeReason.SESSION_ENDING, AuditTrail.SYSTEM, false, 0);
      deny(f, DenyReason.NOT_PERMITTED, "the session is ending: " + endedMeanwhile.token());
      return;
    }
    // A reload that ran since issue() reviewed this grant but could not find it here to revoke it
    // (grantIssued had not run): the authority still marks it forbidden, so it ends now, before its
    // R_Key is ever sent. A reload after grantIssued finds it in the tables and ends it itself.
    Optional<ReloadResult.ForbiddenGrant> forbidden = ctx.authority().forbidden(grantId);
    if (forbidden.isPresent()) {
      end(grant, RevokeReason.POLICY_CHANGED, AuditTrail.SYSTEM, false, 0);
      deny(
          f,
          DenyReason.NOT_PERMITTED,
          "the policy reloaded while the grant was being issued forbids it: "
              + forbidden.get().detail());
      return;
    }
    long delay = Duration.between(Instant.now(), live.expiresAt()).toMillis();
    // on the watchdog thread, which never writes to a peer: a peer that stops reading blocks the
    // REVOKE write (sent from the timer), never another grant's invalidation at its expiry
    try {
      grant.expiry =
          ctx.watchdog().schedule(() -> expire(grant), Math.max(0, delay), TimeUnit.MILLISECONDS);
      if (s.slots.hasEnded(grant)) {
        // ended since it was listed, before its expiry was set for the end to cancel: the task
        // would hold the grant and its session until the TTL (it would find the grant ended)
        grant.expiry.cancel(false);
      }
    } catch (RejectedExecutionException closing) {
      // the host is closing (its watchdog stopped before it ends the sessions): nothing new now;
      // the R_Key was never sent
      end(grant, RevokeReason.SESSION_ENDING, AuditTrail.SYSTEM, false, 0);
      deny(f, DenyReason.NOT_PERMITTED, "the host is shutting down");
      return;
    }
    boolean reader = operations.contains(Operation.READ);
    byte[] key = reader ? hosted.regionKeyMaterial() : new byte[0];
    int keyGeneration = reader ? RegionKeyMaterial.generation(key) : 0;
    // end() marks the grant ended before it rotates the region key: a grant revoked (or expired)
    // before the key was taken is seen here, so its GRANT never carries a key that was made after
    // its end; one revoked after this point gets the key its end then replaces. The check and the
    // GRANT are one step on the proxy (whose writes are serialized on it): an end marked after the
    // check writes its REVOKE after the GRANT, so the holder never gets a REVOKE for a grant it
    // does not know yet and then the grant as if it were live.
    ControlProxy proxy = s.proxy;
    try {
      synchronized (proxy) {
        if (s.slots.hasEnded(grant)) {
          deny(f, DenyReason.NOT_PERMITTED, "the grant was revoked before it was issued");
          return;
        }
        proxy.grant(
            f.requestId(),
            id,
            region,
            ops,
            offset,
            length,
            live.expiresAt().toEpochMilli(),
            grant.remoteAddress,
            grant.rkey,
            key);
        grant.announced = true;
      }
    } finally {
      Arrays.fill(key, (byte) 0);
    }
    if (reader) {
      hosted.addReader(grant, keyGeneration); // sends REGION_KEY if the key rotated meanwhile
    }
  }

  /** A RELEASE: the grant ends (REVOKE with reason RELEASED answers it, also for unknown ids). */
  void release(Frame f) throws IOException {
    long id = f.release().grantId();
    HostGrant g = s.slots.byId(id);
    OpenerThread opener = s.opener;
    if (g != null && opener != null && g.live.operations().contains(Operation.WRITE)) {
      // records the peer wrote before its RELEASE (their writes completed) may still sit in the
      // receive queue: open them while the grant is live, or they are refused as naming an ended
      // grant and audited as a violation of an honest peer (as on CLOSE, see HostSession.end)
      opener.drain(ctx.options().requestTimeout());
    }
    if (g == null || !end(g, RevokeReason.RELEASED, s.identity, true, f.requestId())) {
      s.proxy.revoke(f.requestId(), id, RevokeReason.RELEASED);
    }
  }

  /**
   * Ends a grant: invalidates its window (or deregisters its region) first, so the RNIC refuses any
   * later access, then releases it in the policy, audits and tells the client.
   *
   * @return false when it had already ended
   */
  boolean end(HostGrant g, RevokeReason reason, String actor, boolean notify, int requestId) {
    synchronized (noticeLock) {
      return endLocked(g, reason, actor, notify, requestId);
    }
  }

  /**
   * Waits until no grant's end is between its invalidation and its REVOKE notice (bounded: an end
   * waits at most for its invalidation's completion and the notice's write). The timer thread,
   * before ending a session whose queue pair failed.
   */
  void afterNotices() {
    synchronized (noticeLock) {
      // a barrier: the notices of ends in progress are written (or queued) once this is entered
    }
  }

  private boolean endLocked(
      HostGrant g, RevokeReason reason, String actor, boolean notify, int requestId) {
    if (!s.slots.markEnded(g, reason == RevokeReason.RELEASED ? -1 : s.notificationsSeen.get())) {
      return false;
    }
    if (g.expiry != null) {
      g.expiry.cancel(false);
    }
    try {
      binder.invalidate(g);
    } finally {
      g.region.liveGrants.decrementAndGet();
      if (g.live.operations().contains(Operation.READ)) {
        g.region.readerEnded(g); // new region key: the holder must not open what comes next
      }
      LiveGrant live = ctx.authority().release(Long.toString(g.id)).orElse(g.live);
      ctx.tables().grantEnded(g);
      SessionEnd because = s.ending.get();
      s.audit.revoked(
          live,
          actor,
          because != null && reason == RevokeReason.SESSION_ENDING
              ? because.token()
              : reason.name().toLowerCase(Locale.ROOT));
    }
    if (notify) {
      notice(g, requestId, reason);
    }
    return true;
  }

  /**
   * Writes REVOKE for ended grant {@code g}: always as the answer to a request ({@code requestId}
   * not 0), else only when its GRANT went out — a grant ended while being issued is answered with
   * GRANT_DENIED, so its holder never sees a REVOKE for a grant it does not know. May block on a
   * peer that does not read.
   */
  private void notice(HostGrant g, int requestId, RevokeReason reason) {
    ControlProxy p = s.proxy;
    if (p == null || s.ended.get()) {
      return;
    }
    try {
      synchronized (p) {
        if (requestId != 0 || g.announced) {
          p.revoke(requestId, g.id, reason);
        }
      }
    } catch (IOException e) {
      LOG.debug("could not tell {} of revocation: {}", s.identity, e.getMessage());
    }
  }

  /** A grant's TTL passed (watchdog thread): invalidate now, tell the holder from the timer. */
  private void expire(HostGrant grant) {
    synchronized (noticeLock) { // the notice is queued before a queue-pair-error ending can be
      if (!end(grant, RevokeReason.EXPIRED, AuditTrail.SYSTEM, false, 0)) {
        return;
      }
      try {
        ctx.timer().execute(() -> tellRevoked(grant, RevokeReason.EXPIRED));
      } catch (RejectedExecutionException e) {
        // the host is closing: the session ends anyway
      }
    }
  }

  /** Sends REVOKE for an ended grant (may block on a peer that does not read). */
  void tellRevoked(HostGrant g, RevokeReason reason) {
    notice(g, 0, reason);
  }

  /**
   * Sends the holder of READ grant {@code g} the region's new key (REGION_KEY) and wipes {@code
   * material}. Any thread; a session that ended or is being ended by the host, or a grant that
   * ended, gets nothing.
   */
  void sendRegionKey(HostGrant g, int generation, byte[] material) {
    try {
      // a session the host is ending (certificate revoked…) gets no key it did not have
      ControlProxy p = s.proxy;
      if (p != null && !s.ended.get() && s.ending.get() == null && !g.ended) {
        p.regionKey(g.id, generation, material);
      }
    } catch (IOException e) {
      LOG.debug("could not send {} the new region key: {}", s.identity, e.getMessage());
    } finally {
      Arrays.fill(material, (byte) 0);
    }
  }

  private void deny(Frame f, DenyReason reason, String text) throws IOException {
    ctx.counters().denials.increment();
    String safe = text == null ? "" : text;
    s.proxy.grantDenied(
        f.requestId(), reason, safe.length() > 1000 ? safe.substring(0, 1000) : safe);
  }

  private static Decision denied(Decision d, String why) {
    return new Decision(
        io.srdma.policy.DecisionReason.OUT_OF_BOUNDS,
        why,
        d.identity(),
        d.tenant(),
        d.region(),
        d.operations(),
        d.offset(),
        d.length(),
        d.effectiveTtl(),
        d.role(),
        d.permission(),
        d.maxLiveGrants(),
        d.policySha256());
  }
}
