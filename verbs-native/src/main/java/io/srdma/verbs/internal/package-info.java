/**
 * Parts shared by the providers: key tables ({@code soft}, {@code loopback}) and child counts (all
 * three). Public only because Java has no friend packages; not API, may change without notice.
 * Application code uses {@link io.srdma.verbs}.
 */
package io.srdma.verbs.internal;
