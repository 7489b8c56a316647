package io.srdma.host;

import io.srdma.channel.ChannelException;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.record.OwnerOpener;
import io.srdma.channel.record.OwnerSealer;
import io.srdma.channel.record.OwnerSigning;
import io.srdma.channel.record.RegionKeyMaterial;
import io.srdma.keys.Direction;
import io.srdma.keys.DirectionKeys;
import io.srdma.verbs.MemoryRegion;
import java.nio.ByteBuffer;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.security.auth.DestroyFailedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Memory a {@link RegionHost} registered for one region of one tenant, in that tenant's protection
 * domain. Tenant peers write sealed records into it through grants; the host reads them through
 * {@link #onRecord}. The host can also seal records into it ({@link #seal}) that readers holding a
 * read grant fetch with RDMA READ and open with the region key their grant carries.
 *
 * <p>Owner records are sealed under the region key of the current <em>generation</em> and signed
 * with an Ed25519 key only the host holds, with a version that grows with every record sealed. The
 * region key is rotated whenever a READ grant on the region ends (revoked, released, expired, its
 * session ended) and on a timer ({@link HostOptions#regionKeyRotation(Duration)}); at each rotation
 * the records this region published and that are still intact are re-sealed under the new
 * generation with new versions, and every live READ grant's holder is sent the new key
 * (REGION_KEY).
 *
 * <p>Thread safety: all methods are thread-safe. Buffers: the region's memory belongs to the host
 * and is freed when the host closes; {@link #seal} reads the plaintext during the call only (its
 * position is not moved) and the caller keeps the buffer; a {@link RecordListener} sees each
 * record's plaintext during its call only ({@link ReceivedRecord}).
 */
public final class HostedRegion {
  private static final Logger LOG = LoggerFactory.getLogger(HostedRegion.class);

  /** Length of the region key material a read grant carries ({@link RegionKeyMaterial}). */
  static final int REGION_KEY_MATERIAL = RegionKeyMaterial.LENGTH;

  private final String tenant;
  private final String name;
  private final ByteBuffer memory;
  private final MemoryRegion registration;
  private final int maxRecordPayload;
  private final SecureRandom random = new SecureRandom();
  private final KeyPair signing;
  private final byte[] ownerPublic;
  private final ScheduledExecutorService timer;
  private final ScheduledFuture<?> rotationTimer;
  final AtomicInteger liveGrants = new AtomicInteger();
  private volatile RecordListener listener;

  // guarded by this
  private final Set<HostGrant> readers = new LinkedHashSet<>();
  private final OwnerRecords published;
  private int generation;
  private DirectionKeys regionKeys;
  private OwnerSealer sealer;
  private byte[] material;
  private boolean rotationPending;
  private boolean closed;

  HostedRegion(
      String tenant,
      String name,
      ByteBuffer memory,
      MemoryRegion registration,
      int maxPayload,
      ScheduledExecutorService timer,
      Duration rotation) {
    this.tenant = tenant;
    this.name = name;
    this.memory = memory;
    this.published = new OwnerRecords(memory, maxPayload);
    this.registration = registration;
    this.maxRecordPayload = maxPayload;
    this.timer = timer;
    this.signing = OwnerSigning.generate(random);
    this.ownerPublic = OwnerSigning.raw(signing.getPublic());
    install(0);
    long period = rotation.toMillis();
    this.rotationTimer =
        timer.scheduleWithFixedDelay(this::rotateOnTimer, period, period, TimeUnit.MILLISECONDS);
  }

  /** Makes {@code next} the current generation with a fresh key (caller holds the lock). */
  private void install(int next) {
    byte[] key = new byte[DirectionKeys.KEY_LENGTH];
    byte[] prefix = new byte[DirectionKeys.NONCE_PREFIX_LENGTH];
    random.nextBytes(key);
    random.nextBytes(prefix);
    try {
      regionKeys = DirectionKeys.fromMaterial(Direction.RESPONDER_TO_INITIATOR, next, key, prefix);
      material = RegionKeyMaterial.encode(next, key, prefix, ownerPublic);
    } finally {
      Arrays.fill(key, (byte) 0);
      Arrays.fill(prefix, (byte) 0);
    }
    sealer = new OwnerSealer(regionKeys, signing.getPrivate(), tenant, name, maxRecordPayload);
    generation = next;
  }

  /** The tenant that owns the region. */
  public String tenant() {
    return tenant;
  }

  /** The region's name in the policy. */
  public String name() {
    return name;
  }

  /** Registered bytes. */
  public long size() {
    return memory.capacity();
  }

  /** Grants live on this region now. */
  public int liveGrants() {
    return liveGrants.get();
  }

  /** The generation of the region key owner records are sealed under now (0 at registration). */
  public synchronized int keyGeneration() {
    return generation;
  }

  /**
   * Sets who is told of records written into this region (replacing any earlier listener). Without
   * a listener records are still verified and counted, and their plaintext is dropped. The listener
   * is called on the host's opener threads: in order and one at a time for each session, possibly
   * at the same time for different sessions; it must not block (see {@link RecordListener}).
   */
  public void onRecord(RecordListener value) {
    listener = value;
  }

  /**
   * Seals {@code plaintext} (from its position; not moved) into the region at {@code offset}, as
   * owner records laid end to end, for readers with a read grant over that range. A rotation that a
   * READ grant's end asked for is done first, so no reader whose grant ended can open them.
   *
   * <p>Every record but the last says another follows it ({@link OwnerSealer#FOLLOWED}), and so
   * does the last when one of this region's records begins where it ends; a record of this region
   * that ends where these begin is re-sealed to say so. A reader that finds never-written bytes
   * after a record that says one follows refuses the read: zeroing the records after the first no
   * longer reads as their clean end. Records are written last first, and the one before them
   * re-sealed after them, so a record never says one follows before that one is there.
   *
   * @return region bytes written ({@link SealedLayout#ownerSealedLength})
   * @throws ChannelException {@code INVALID_ARGUMENT} for no plaintext, {@code OUT_OF_BOUNDS} when
   *     the sealed data would not fit (nothing is written then), {@code SESSION_CLOSED} once the
   *     host closed.
   */
  public long seal(long offset, ByteBuffer plaintext) {
    List<Delivery> deliveries = List.of();
    try {
      synchronized (this) {
        if (closed) {
          throw new ChannelException(
              ChannelException.Reason.SESSION_CLOSED, "region " + this + " is closed");
        }
        // the range is read once: another thread moving the buffer's position or limit later
        // changes nothing of what was checked and is sealed
        ByteBuffer src = plaintext.duplicate();
        long total = SealedLayout.ownerSealedLength(src.remaining(), maxRecordPayload);
        if (offset < 0 || offset > memory.capacity() || memory.capacity() - offset < total) {
          throw new ChannelException(
              ChannelException.Reason.OUT_OF_BOUNDS,
              "sealing "
                  + total
                  + " bytes at offset "
                  + offset
                  + " does not fit region "
                  + tenant
                  + "/"
                  + name
                  + " of "
                  + memory.capacity()
                  + " bytes");
        }
        if (rotationPending) {
          deliveries = rotateLocked();
        }
        published.sealRun(sealer, offset, src, this::currentOpener);
        return total;
      }
    } finally {
      deliver(deliveries);
    }
  }

  /** An opener of the current generation's records, for checking them before a re-seal. */
  private OwnerOpener currentOpener() {
    int current = generation;
    DirectionKeys keys = regionKeys;
    return new OwnerOpener(
        g -> g == current ? keys : null,
        signing.getPublic(),
        tenant,
        name,
        maxRecordPayload,
        false);
  }

  /**
   * Rotates the region key now: a new generation, the intact published records re-sealed under it,
   * the new key sent to every live READ grant.
   *
   * @return the new generation
   * @throws ChannelException {@code SESSION_CLOSED} once the host closed
   */
  public int rotateKey() {
    List<Delivery> deliveries;
    int now;
    synchronized (this) {
      if (closed) {
        throw new ChannelException(
            ChannelException.Reason.SESSION_CLOSED, "region " + this + " is closed");
      }
      deliveries = rotateLocked();
      now = generation;
    }
    deliver(deliveries);
    return now;
  }

  private void rotateOnTimer() {
    try {
      synchronized (this) {
        if (closed) {
          return;
        }
      }
      rotateKey();
    } catch (RuntimeException e) {
      LOG.warn("rotating the region key of {}/{} failed", tenant, name, e);
    }
  }

  private void rotateIfPending() {
    List<Delivery> deliveries = List.of();
    try {
      synchronized (this) {
        if (closed || !rotationPending) {
          return;
        }
        deliveries = rotateLocked();
      }
    } catch (RuntimeException e) {
      LOG.warn("rotating the region key of {}/{} failed", tenant, name, e);
    } finally {
      deliver(deliveries);
    }
  }

  /** New generation, re-seal, deliveries to live readers (caller holds the lock). */
  private List<Delivery> rotateLocked() {
    if (generation == Integer.MAX_VALUE) {
      throw new ChannelException(
          ChannelException.Reason.RESOURCE_EXHAUSTED, "region key generations spent");
    }
    DirectionKeys old = regionKeys;
    byte[] oldMaterial = material;
    int oldGeneration = generation;
    install(generation + 1);
    OwnerOpener check =
        new OwnerOpener(
            g -> g == oldGeneration ? old : null,
            signing.getPublic(),
            tenant,
            name,
            maxRecordPayload,
            false);
    int dropped;
    try {
      dropped = published.resealAll(check, sealer);
    } finally {
      old.close();
      Arrays.fill(oldMaterial, (byte) 0);
    }
    rotationPending = false;
    readers.removeIf(g -> g.ended);
    List<Delivery> out = new ArrayList<>(readers.size());
    for (HostGrant g : readers) {
      out.add(new Delivery(g, generation, material.clone()));
    }
    LOG.debug(
        "region key of {}/{} now generation {} ({} records re-sealed, {} dropped, {} readers)",
        tenant,
        name,
        generation,
        published.size(),
        dropped,
        out.size());
    return out;
  }

  private static void deliver(List<Delivery> deliveries) {
    for (Delivery d : deliveries) {
      d.grant.session.grants.sendRegionKey(d.grant, d.generation, d.material);
    }
  }

  /**
   * A copy of generation ‖ key ‖ nonce prefix ‖ owner public key: what a read grant carries. Wipe
   * it after use.
   */
  synchronized byte[] regionKeyMaterial() {
    return material.clone();
  }

  /**
   * Registers a READ grant whose GRANT frame carried {@code sentGeneration}'s key; if the key
   * rotated since, its holder is sent the current one now (a rotation sends only to registered
   * readers).
   */
  void addReader(HostGrant g, int sentGeneration) {
    Delivery d = null;
    synchronized (this) {
      if (closed || g.ended) {
        return;
      }
      readers.add(g);
      if (generation != sentGeneration) {
        d = new Delivery(g, generation, material.clone());
      }
    }
    if (d != null) {
      deliver(List.of(d));
    }
  }

  /**
   * A READ grant on this region ended: the key it knew must not seal anything more. The rotation
   * runs on the host's timer; {@link #seal} does it first if it has not run yet, so requests that
   * come in a burst are coalesced into one rotation.
   */
  void readerEnded(HostGrant g) {
    synchronized (this) {
      readers.remove(g);
      if (closed) {
        return;
      }
      rotationPending = true;
    }
    try {
      timer.execute(this::rotateIfPending);
    } catch (RejectedExecutionException e) {
      LOG.debug("host timer stopped; rotation of {}/{} left to the next seal", tenant, name);
    }
  }

  /**
   * Copies raw region bytes (ciphertext as written) into {@code destination}: for checks and
   * diagnostics.
   */
  public void copy(long offset, byte[] destination) {
    if (offset < 0 || offset > memory.capacity() - (long) destination.length) {
      throw new ChannelException(
          ChannelException.Reason.OUT_OF_BOUNDS,
          "copy of " + destination.length + " bytes at " + offset + " is outside the region");
    }
    memory.get((int) offset, destination);
  }

  ByteBuffer memory() {
    return memory;
  }

  MemoryRegion registration() {
    return registration;
  }

  RecordListener listener() {
    return listener;
  }

  /** Whether the region key and its material were wiped ({@link #close}). */
  synchronized boolean isKeyMaterialWiped() {
    if (!closed || !regionKeys.isClosed()) {
      return false;
    }
    for (byte b : material) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      rotationTimer.cancel(false);
      regionKeys.close();
      Arrays.fill(material, (byte) 0);
      readers.clear();
      published.clear();
      try {
        signing.getPrivate().destroy();
      } catch (DestroyFailedException e) {
        // the JDK's Ed25519 private key cannot be wiped: only dropped (docs/data-plane.md)
      }
    }
    registration.close();
  }

  @Override
  public String toString() {
    return "HostedRegion[" + tenant + "/" + name + ", " + memory.capacity() + " bytes]";
  }

  /** A new key for one READ grant's holder. */
  private record Delivery(HostGrant grant, int generation, byte[] material) {}
}
