/**
 * Parts shared by the providers: key tables ({@code soft}, {@code loopback}) and child counts (all
 * three), the libc binding of {@code CpuAffinity} and the bench's switch counter, and the binder of
 * Java 22+ critical downcalls ({@link io.srdma.verbs.internal.CriticalDowncalls}). Public only
 * because Java has no friend packages; not API, may change without notice. Application code uses
 * {@link io.srdma.verbs}.
 */
package io.srdma.verbs.internal;
