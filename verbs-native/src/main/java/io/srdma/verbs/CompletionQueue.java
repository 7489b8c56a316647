package io.srdma.verbs;

import java.time.Duration;

/**
 * A completion queue ({@code struct ibv_cq}). Work completions of the queue pairs that use it
 * arrive here, per queue pair in the order the requests were posted.
 *
 * <p>One CQ may serve many queue pairs, on the send side, the receive side or both (a shared CQ):
 * {@link WorkCompletion#qpNum()} of each completion names the queue pair it belongs to. Thread
 * safety: {@link #poll} and {@link #await} may be called from several threads; each completion is
 * handed to exactly one caller.
 */
public interface CompletionQueue extends AutoCloseable {
  /** The most completions it holds (what it was created or last resized with). */
  int capacity();

  /**
   * Changes how many completions the queue holds ({@code ibv_resize_cq}): it may grow or shrink
   * while queue pairs use it and completions are queued; queued completions are kept, in order, and
   * the next overrun is judged against the new capacity. A queue pair's depth may be set against a
   * CQ only after the CQ was grown to cover it: resize before creating the queue pair.
   *
   * <p>Thread safety: may be called while other threads poll, await and post; a provider excludes
   * them for the moment of the copy.
   *
   * @throws VerbsException INVALID_ARGUMENT for a capacity below 1, above the device's {@link
   *     DeviceAttributes#maxCqe()}, or below the completions queued now (nothing is lost then: the
   *     queue is left as it was); CLOSED once closed; NOT_SUPPORTED by a provider that cannot
   *     resize
   */
  default void resize(int capacity) {
    throw new VerbsException(
        VerbsException.Reason.NOT_SUPPORTED,
        "resize_cq",
        getClass().getSimpleName() + " cannot resize a completion queue");
  }

  /**
   * Takes up to {@code out.length} completions without waiting ({@code ibv_poll_cq}).
   *
   * @param out reusable completion objects, filled from index 0
   * @return how many were filled
   * @throws VerbsException RESOURCE_EXHAUSTED when the queue overran (completions were lost)
   */
  int poll(WorkCompletion[] out);

  /**
   * Like {@link #poll} but waits up to {@code timeout} for at least one completion while there is
   * none: a provider may spin and yield for a few microseconds first ({@link BackoffIdleStrategy}),
   * then sleeps. One waiting thread at a time; others queue behind it.
   *
   * @return how many were filled; 0 when the timeout passed
   */
  int await(WorkCompletion[] out, Duration timeout);

  /**
   * Destroys the queue.
   *
   * @throws VerbsException BUSY while queue pairs use it
   */
  @Override
  void close();
}
