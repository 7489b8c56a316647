package io.srdma.verbs.loopback;

import io.srdma.verbs.internal.EmulatedMemoryRegion;
import java.nio.ByteBuffer;

/**
 * Registered memory of the loopback provider (see {@link EmulatedMemoryRegion} for the guarantees).
 */
final class LoopbackMemoryRegion extends EmulatedMemoryRegion<LoopbackProtectionDomain> {
  LoopbackMemoryRegion(LoopbackProtectionDomain pd, ByteBuffer memory, long address, int access) {
    super(pd, memory, address, access);
  }
}
