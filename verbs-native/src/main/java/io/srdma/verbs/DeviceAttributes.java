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
    boolean windowBoundsEnforced) {}
