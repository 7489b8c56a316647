package io.srdma.verbs;

/**
 * What a device can do ({@code struct ibv_device_attr} plus findings of this layer).
 *
 * @param maxMessageSize the largest single message, in bytes
 * @param maxQp the largest number of queue pairs
 * @param maxMr the largest number of memory regions
 * @param maxMw the largest number of memory windows
 * @param maxQpWr the deepest send or receive queue
 * @param maxSge the most scatter/gather entries per work request
 * @param maxCqe the deepest completion queue
 * @param memoryWindowType2 whether type-2 memory windows are supported
 * @param windowBoundsEnforced whether an access through a window outside the window's range but
 *     inside its memory region is refused. False on rxe (see softroce.md): grants must then be
 *     scoped by a memory region registered over exactly the granted range.
 * @param localHeapMemory whether {@link ProtectionDomain#registerMemory} takes a heap buffer for
 *     memory without remote rights or {@link AccessFlags#MW_BIND} (the local side of requests: a
 *     WRITE's source, a READ's destination), moving its bytes as fast as a direct buffer's. True on
 *     {@code loopback} only: real verbs need pinned native memory, and {@code soft}'s socket I/O
 *     would copy a heap buffer once more. A caller that seals into its send memory can then seal
 *     straight into it (the JCE's AES-GCM writes arrays at full speed, direct memory at about
 *     half), so the only copy on the writer is the transport's.
 */
public record DeviceAttributes(
    long maxMessageSize,
    int maxQp,
    int maxMr,
    int maxMw,
    int maxQpWr,
    int maxSge,
    int maxCqe,
    boolean memoryWindowType2,
    boolean windowBoundsEnforced,
    boolean localHeapMemory) {}
