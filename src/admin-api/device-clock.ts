/**
 * The device's clock as its last answer's HTTP `Date` header told it, beside this machine's time
 * when that answer arrived: the client records it, the plan judges certificates against it.
 * Second resolution (the header's own).
 */
export interface DeviceClock {
  deviceTime: Date;
  localTime: Date;
}
