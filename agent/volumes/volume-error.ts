/** A volume that cannot be set up (yet): its message reads as upstream's MountVolume.SetUp errors. */
export class VolumeError extends Error {}
