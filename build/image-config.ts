// What the banlieue image declares: entrypoint, user, environment and the
// OCI annotations (image-spec annotations.md), written once for the manifest
// and, as labels, for the config. build/Dockerfile declares the same.

/** Media types of image-spec v1.1. */
export const MediaType = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** The single executable, the image's only program (build/image.sh puts it there). */
export const ENTRYPOINT = '/usr/local/bin/banlieue';
/** nonroot in the image's /etc/passwd; the install's pods run as it too (infra/install/role-workload.ts). */
export const IMAGE_USER = '65532:65532';

export interface ImageConfigProps {
  /** package.json version, e.g. 0.1.0; the image is tagged v<version>. */
  readonly version: string;
  /** git commit the build was made from. */
  readonly commit: string;
  /** RFC 3339 time of SOURCE_DATE_EPOCH. */
  readonly created: string;
}

export class ImageConfig {
  constructor(private readonly props: ImageConfigProps) {}

  /** The tag the install names (RELEASE_TAG): v0.1.0. */
  get tag(): string {
    return `v${this.props.version}`;
  }

  annotations(): Record<string, string> {
    return {
      'org.opencontainers.image.title': 'banlieue',
      'org.opencontainers.image.description':
        'Kubernetes-native virtual machines and a Cluster API infrastructure provider; roles by subcommand: controller, provider <backend>',
      'org.opencontainers.image.version': this.props.version,
      'org.opencontainers.image.revision': this.props.commit,
      'org.opencontainers.image.created': this.props.created,
      'org.opencontainers.image.source': 'https://github.com/banlieue/banlieue',
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.ref.name': this.tag,
    };
  }

  /** The image configuration (image-spec config.md) over one layer with uncompressed digest `diffId`. */
  config(diffId: string): unknown {
    return {
      created: this.props.created,
      architecture: 'amd64',
      os: 'linux',
      config: {
        User: IMAGE_USER,
        Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'HOME=/home/nonroot'],
        Entrypoint: [ENTRYPOINT],
        Cmd: ['--help'],
        WorkingDir: '/',
        Labels: this.annotations(),
      },
      rootfs: { type: 'layers', diff_ids: [diffId] },
      history: [{ created: this.props.created, created_by: 'build/image.sh: Debian runtime libraries, /etc/passwd, the banlieue single executable' }],
    };
  }
}
