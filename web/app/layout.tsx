import type { Metadata } from "next";
import Link from "next/link";
import "@fontsource/noto-sans-jp/400.css";
import "@fontsource/noto-sans-jp/700.css";
import "./globals.css";
import OfflineNotice from "@/components/OfflineNotice";
import SignInPrompt from "@/components/SignInPrompt";
import StreamlitLink from "@/components/StreamlitLink";
import WhoAmI from "@/components/WhoAmI";

export const metadata: Metadata = {
  title: "経理エージェント",
  description: "経理・バックオフィス業務のためのリサーチ、ヘルプデスク、Plan 実行",
};


export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="ja">
      <body>
        <a className="skip-link" href="#main">
          本文へ移動
        </a>
        <header className="site-header">
          <Link href="/" className="brand">
            経理エージェント
          </Link>
          <nav aria-label="メインメニュー">
            <ul>
              <li>
                <Link href="/">リサーチ</Link>
              </li>
              <li>
                <Link href="/sessions/">セッション</Link>
              </li>
              <li>
                <Link href="/helpdesk/">ヘルプデスク</Link>
              </li>
              <li>
                <Link href="/analysis/">データ分析</Link>
              </li>
              <li>
                <Link href="/design/">設計</Link>
              </li>
              <li>
                <Link href="/plans/">Plan</Link>
              </li>
              <li>
                <Link href="/schedules/">予定</Link>
              </li>
              <li>
                <Link href="/approvals/">承認待ち</Link>
              </li>
              <li>
                <Link href="/history/">履歴</Link>
              </li>
              <li>
                <Link href="/audit/">監査ログ</Link>
              </li>
              <StreamlitLink />
            </ul>
          </nav>
          <WhoAmI />
        </header>
        <main id="main">
          <OfflineNotice />
          {children}
        </main>
        <SignInPrompt />
      </body>
    </html>
  );
}
