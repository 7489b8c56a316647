/**
 * Parts shared by the providers: key tables ({@code soft}, {@code loopback}) and child counts (all
 * three), and the libc binding of {@code CpuAffinity} and the bench's switch counter. Public only
 * because Java has no friend packages; not API, may change without notice. Application code uses
 * {@link io.srdma.verbs}.
 */
package io.srdma.verbs.internal;
