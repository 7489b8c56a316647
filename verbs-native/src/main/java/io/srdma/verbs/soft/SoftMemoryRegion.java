package io.srdma.verbs.soft;

import io.srdma.verbs.internal.EmulatedMemoryRegion;
import java.nio.ByteBuffer;

/** Registered memory of the soft provider (see {@link EmulatedMemoryRegion} for the guarantees). */
final class SoftMemoryRegion extends EmulatedMemoryRegion<SoftProtectionDomain> {
  SoftMemoryRegion(SoftProtectionDomain pd, ByteBuffer memory, long address, int access) {
    super(pd, memory, address, access);
  }
}
