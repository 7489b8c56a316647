package io.srdma.verbs;

/**
 * An open device ({@code struct ibv_context}); the root of all other verbs objects.
 *
 * <p>Closing: a parent with live children refuses to close with {@link VerbsException.Reason#BUSY}
 * (as {@code ibv_close_device} and {@code ibv_dealloc_pd} return EBUSY), naming what is still open.
 * Close children first; try-with-resources does that naturally. {@code close()} of a closed object
 * does nothing.
 */
public interface DeviceContext extends AutoCloseable {
  /** The device. */
  Device device();

  /** What the device can do ({@code ibv_query_device}). */
  DeviceAttributes queryDevice();

  /** Allocates a protection domain ({@code ibv_alloc_pd}). */
  ProtectionDomain allocateProtectionDomain();

  /**
   * Creates a completion queue ({@code ibv_create_cq}).
   *
   * @param capacity the most completions it holds; overrunning it is an error
   */
  CompletionQueue createCompletionQueue(int capacity);

  /**
   * Creates a completion queue whose receive-side work is done by {@code progress}. Providers whose
   * hardware (or the writer's own call) places incoming requests ignore it; the default does.
   *
   * @param capacity the most completions it holds; overrunning it is an error
   * @param progress who places the incoming requests of the queue pairs that report receives here
   */
  default CompletionQueue createCompletionQueue(int capacity, CompletionProgress progress) {
    java.util.Objects.requireNonNull(progress, "progress");
    return createCompletionQueue(capacity);
  }

  /**
   * Closes the device.
   *
   * @throws VerbsException BUSY when protection domains or completion queues are still open
   */
  @Override
  void close();
}
