import type { NextConfig } from "next";

// A static export into web/out: `keiri-agent serve` serves it at `/` next to /api and /graphql.
// trailingSlash maps /sessions/ to sessions/index.html.
const nextConfig: NextConfig = {
  output: "export",
  trailingSlash: true,
  images: { unoptimized: true },
};

export default nextConfig;
