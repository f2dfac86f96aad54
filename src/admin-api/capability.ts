import { z } from 'zod';

/** GET /appliance/capability: per physical interface what transmission parameters it supports. */
const PortCapability = z.looseObject({
  autoneg: z.boolean().optional(),
  speeds: z.array(z.number()).optional(),
  duplex: z.array(z.string()).optional(),
  wireless: z.boolean().optional(),
});

export const Capability = z.looseObject({
  interfaces: z.record(z.string(), PortCapability),
});
export type Capability = z.infer<typeof Capability>;
