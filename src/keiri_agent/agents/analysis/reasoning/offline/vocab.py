"""The words of the offline rules: what a request asks for, in Japanese and English.

Each table maps a label to ``|``-separated terms; a term starting with ``~`` is a
raw regular expression, any other term is matched as a whole word (ASCII) or a
substring (Japanese) by ``term_pattern``.
"""

from __future__ import annotations

import re

from keiri_agent.agents.analysis.reasoning.offline.parser import term_pattern

# What a clause asks for, strongest (most explicit) first.
INTENTS: dict[str, str] = {
    "box": "箱ひげ|ボックスプロット|box plot|boxplot|box-plot|box and whisker|外れ値|異常値"
    "|outlier|outliers",
    "scatter": "散布図|scatter|scatter plot|scatterplot|scatterplots",
    "hist": "ヒストグラム|度数分布|histogram|histograms|hist|histo",
    "line": "折れ線|時系列グラフ|line chart|line graph|line plot|line charts",
    "bar": "棒グラフ|バーチャート|bar chart|bar graph|bar plot|bar charts",
    "correlation": "相関|~correlat|~(related|relate|relates|linked) to",
    "missingness": "欠損|欠測|欠落|未入力|空欄|空白|missing|null|nulls|nan|nans|blank|blanks|empty"
    "|gaps|unfilled",
    "share": "構成比|割合|シェア|比率|パレート|abc分析|abc|内訳|占め|円グラフ|share"
    # "shares" of stock ("the number of shares purchased") are no share of a total
    "|~(?<!number of )(?<!how many )shares(?! (purchased|bought|sold|held|issued|owned|traded))"
    "(?![a-z])"
    "|~全体の\\s*何\\s*(?:[%％]|パーセント|割)|~何\\s*(?:[%％]|パーセント)\\s*(?:ずつ|を占め)"
    "|proportion|proportions|percentage|percentages|percent|pareto|composition|pie"
    "|~what %|~account(?:s|ed)? for|~goes to each|~go to each",
    "duplicate": "~重複(?!\\s*(?:なし|無し|なく|を?除|は除|を省|は省|分?を?数えない))"
    "|~同じ[^。？?]{1,15}同じ"
    "|ダブり|ダブって|二重|複数回|何度も|~duplicat|dupe|dupes|dedupe|~repeat(ed|s)?|twice"
    "|more than once|~(two|2) (entries|records|rows|lines) (in|for|on) the same"
    "|~(?<![0-9０-９])(2|２|二)回(?!目|以上|以下|未満|を超|超)",
    "summary": "要約|統計量|基本統計|記述統計|統計情報|サマリ|サマリー|summary|summaries"
    "|~summari[sz]e|describe|descriptive|statistics|stats",
    "overview": "概要|全体像|どんなデータ|データの中身|中身|データ構造|列一覧|カラム一覧"
    "|~(どんな|どういう|どのような)(項目|列|カラム)"
    "|項目一覧|列の一覧|何行|行数|先頭|プレビュー|overview|~what (kind of |sort of )?data"
    "|~looks? like|~what'?s in|~what is in|structure"
    "|~list (of )?(the |all )?(the )?columns|~what columns|column names|~how many rows"
    "|shape|preview|~first (few )?rows|glimpse|~about (this|the) (data|dataset|file)"
    "|~rows,? (and )?columns|~summari[sz]e (the |this )?(data|dataset|file)\\b",
    "hist_soft": "分布|distribution|distributions|~distributed",
    "line_soft": "推移|トレンド|時系列|経年|変化|動向|伸び|over time|trend|trends"
    "|time series|timeline|~changed? over|evolution|~how .* changed",
    "scatter_soft": "関係|関連|relationship|relationships|relation|vs|versus|against",
    "bar_soft": "比較|比べ|~compar(e|es|ed|ing|ison)",
    "ranking": "ランキング|上位|下位|トップ|ベスト|ワースト|順位|多い順|少ない順|高い順"
    "|低い順|最も|一番|いちばん|ranking|rank|ranked|top|bottom|best|worst|highest|lowest|largest"
    "|smallest|biggest|most|least",
    "aggregate": "集計|まとめ|aggregate|aggregated|~group(ed)? by|tally|break down|breakdown",
    "overview_soft": "全体|ざっと|ざっくり|~(quick|first|brief) look|~look at|glance|~get a feel",
}
AGGS: dict[str, str] = {
    "nunique": "ユニーク数|種類数|何種類|distinct|unique|nunique|number of unique"
    "|~重複\\s*(?:なし|無し|なく|を?除|は除|を省|は省|分?を?数えない)"
    "|number of distinct|how many unique|how many distinct|how many different",
    "sum": "合計|総額|総計|総和|合算|トータル|足すと|足して|足し合わせ|足し上げ"
    "|sum|sums|total|totals|summed|altogether|all together"
    "|in total",
    "mean": "平均|平均値|average|averages|avg|mean|means",
    "count": "件数|注文数|取引数|回数|何件|頻度|人数|数えて|数える|数えた|~(?<!ア)カウント"
    "|~の数(?![値量字式])"
    "|count|counts|~count(ed|ing)(?! (only|just) )|number of|how many|frequency"
    "|headcount|head count",
    "max": "最大|最大値|最高値|最高額|最高|多くて|一番高い|一番高額|最も高い|最も高額"
    "|いちばん高い|一番大きい|最も大きい|max|maximum"
    "|~the most (?:we|i|they|you|anyone) (?:pay|paid|spend|spent|charge)"
    # not an order ("highest first") nor the ranking of a total ("the highest yen total")
    "|~(longest|highest|largest|biggest|heaviest|most expensive|latest)"
    " (?!\\d|first\\b|(?:[a-z-]+ ){0,2}(?:totals?|sums?)\\b)"
    "|~(一番|最も|いちばん)[_\\s]*(が|の)?[_\\s]*(高|大き|遅|新し|長|重)(い|かった)",
    "min": "最小|最小値|最低値|最低額|~最低(?!でも|限)|少なくて|一番安い|一番低い|最も安い|最も低い"
    "|いちばん安い|一番小さい"
    "|最も小さい|min|minimum"
    "|~(shortest|lowest|smallest|cheapest|lightest|earliest) (?!\\d)"
    "|~(一番|最も|いちばん)[_\\s]*(が|の)?[_\\s]*(小さ|安|低|早|古|短|軽)(い|かった)",
    "median": "中央値|メディアン|median|medians",
    "std": "標準偏差|ばらつき|バラツキ|散らばり|std|stdev|standard deviation|variability|variation",
}
FREQS: dict[str, str] = {
    "M": "月別|月ごと|月毎|毎月|月次|月単位|年月別|monthly|by month|per month|each month"
    "|month by month|month-by-month|month over month|~by [a-z_]+ (and|&) (by )?months?(?![a-z])",
    "W": "週別|週ごと|週毎|毎週|週次|週単位|weekly|by week|per week|each week",
    "D": "日別|日ごと|日毎|毎日|日次|日単位|daily|by day|per day|each day|day by day",
    "Y": "年別|年ごと|年毎|毎年|年次|年単位|年度別|経年|yearly|annual|annually|by year"
    "|per year|each year|year over year",
    "Q": "~(?<!第.)(?<!第)四半期(?!\\s*\\()|quarterly|by quarter|per quarter|quarters",
}
OUT_OF_SCOPE: dict[str, str] = {
    "predict": "予測|予想|将来|来月|来年|来期|来週|見通し|forecast|forecasts|forecasting"
    "|~predict|projection|projections|~next (month|year|quarter|week)|future",
    "ml": "機械学習|回帰|クラスタリング|クラスタ分析|クラスター分析|分類モデル|ニューラル"
    "|深層学習|ディープラーニング|学習させ|~モデルを(作|構築|学習|訓練)|machine learning"
    "|~regression|~cluster|~classif(y|ier|ication)|neural|deep learning"
    "|~自動(で|的に)?(分類|振り分|仕分|カテゴリ)|~auto-?(categori[sz]|classif|tag)"
    "|~automatically (categori[sz]|classif|tag|label|sort|group)"
    "|~train(ing)? (a |the )?(\\w+ )?model|~build (a |the )?(\\w+ )?model|random forest"
    "|xgboost|k-means|kmeans|sklearn|scikit-learn",
    "file": "メール|送信|~(?<!回)送って(?!(い)?な)|保存|エクスポート|書き出|ダウンロード"
    "|ファイルに出力"
    "|csvに出力|excelに出力|~pdf\\s*(に|で|化|へ|を)"
    "|~(export|save|output|download|convert|turn|make)[^.?!]{0,25}(?<![a-z])pdf(?![a-z])"
    "|~e-?mail (it|this|that|these|them|the|me|us|to|each|every|all|our)"
    "|~(?<!did we )(?<!we )(?<!was )(?<!were )send(?!t\\b)|export"
    "|~(please )?approve (all|the|these|those|every)"
    "|~提出(して(?!い|る)|する|しといて)|申告書|届出書|~e-?tax|~submit(?!ted|s\\b)"
    "|~file (a |the |our )?(tax )?returns?\\b"
    "|~save (it|this|that|the|to|as|into)|~write (it |this |the |that )?(to|into)"
    "|~(update|import|upload|post|register|enter|push) [^.?!]{0,40}(?<![a-z])(in|into|to) "
    "(our |the )?(erp|accounting system|core system|freee|sap)(?![a-z])"
    "|download|slack"
    # into another system: an accounting package, journal entries
    "|~(?<!二重)(に|へ)(取り込(?!まれ)|取込(?!まれ)|インポート|連携して|登録して)|~仕訳を?(起こ|切|作成|作って|入力|登録|計上)|起票"
    "|~(会計システム|基幹システム|システム|freee|弥生|奉行|erp)(に|へ)[^。?？]{0,15}(登録|入力|取り込|反映|計上)"
    "|~import (it |this |them |the \\w+ )?(in)?to|~post (the |these )?(journal )?entries"
    "|~(create|book|make) (the )?journal entries"
    # a document written for someone: 「催促メールを書いて」「注意喚起の文書を作成して」
    "|~(メール|文書|手紙|通知文?|案内文?|文面|レター|お知らせ)を?\\s*(書いて|作成して|作って|起案|下書き)"
    "|~(draft|write|prepare|compose) (a |an |the )?(\\w+ )?(letter|e-?mail|memo|notice|message)s?",
    "web": "web検索|ウェブ検索|ネット検索|ネットで|インターネット|検索して|google"
    "|外部データ|外部の統計|~外部の[^、。]{0,12}データ|公的統計|業界平均|競合"
    "|~(external|official|public) (data|figures|statistics|sources)|~latest (figures|statistics)"
    "|~search (the )?(web|internet|online)|web search|internet(?! banking)"
    "|~(look|search|check|find)[a-z]* (it |this |that |them )?(up )?online|browse|~industry"
    "|competitor|competitors",
    "action": "~(電子)?申請(まで)?(して|を)\\s*"
    "(おいて|おく|ください|下さい|ほしい|欲しい|もらえ|くれ|いただ|お願い)"
    "|~(に|へ)\\s*(連絡|電話|依頼|問い合わせ)して"
    "|~(手配|解約|振込|振り込み|支払い|発注|注文)\\s*(して|しといて|を)\\s*"
    "(おいて|おく|ください|下さい|ほしい|欲しい|もらえ|くれ|いただ|お願い)"
    "|~(上げて|下げて)もら"
    "|~cancel (the |our |my |these |those )?\\w*\\s*"
    "(contracts?|lines?|sims?|subscriptions?|orders?)"
    "|~(contact|call|e-?mail|phone) (the |our )?(carriers?|vendors?|suppliers?|bank|customers?)"
    "|~place (an |the )?orders?|~pay (the |these |those |our )?(invoices?|bills?|vendors?)"
    "|~(mail|post) (out )?(the |these |our )?([a-z-]+ )?"
    "(letters?|reminders?|notices?|postcards?)"
    "|~(郵送|送付|発送)\\s*(して|しといて|を)\\s*(おいて|おく|ください|下さい|ほしい|もらえ|くれ|お願い)",
    "modify": "削除して|書き換|上書き|修正して|~delete|overwrite"
    "|~取り?消して|取り?消しといて|取り?消しておいて|戻しといて|戻しておいて"
    "|~(modify|update|change) (the )?data"
    "|~(change|update|set|modify|edit) (the )?\\w+ of .{1,40} to |に変更して|に更新して"
    "|に直して|に直しておいて|に書き換え|直しておいて|直しといて|修正しておいて"
    "|~に(更新|変更)(しておいて|しといて|しておく|お願い)"
    # a data edit in English: a flag, value or blank set to something ("Change every
    # blank 業者 to …", "change the delivery-delay flag to FALSE for order …")
    "|~(change|set|update|mark|correct|fix|edit|overwrite|replace)\\s+"
    "((every|all|each|the|this|that|these|those)\\s+)?([^\\s.?!]+\\s+){0,3}?"
    "(flags?|values?|blanks?|cells?|entries|entry|records?|rows?|fields?|status(es)?)"
    "\\s+([^.?!]{0,40}?\\s)?to\\s"
    "|~(change|set|update|mark)\\s[^.?!]{0,60}\\sto\\s+(true|false|yes|no|blank|empty|null)\\b",
    "impute": "埋めて|埋める|埋めと|埋めてお|補完|穴埋め|補間"
    "|~fill (in )?(the )?(missing|blank|empty|null|gap)"
    "|~fill .{0,40} with|~imput|~interpolat|backfill|~forward[ -]?fill",
    "transform": "正規化|標準化|スケーリング|偏差値|対数変換|~z-?scores?|~normali[sz]"
    "|~standardi[sz]|~rescal|min-max|~scale .{0,40}(to|between) |~log[ -]?transform",
    # a threshold that is itself a computed value: any comparison ("longer than", "above",
    # 「を超える」) whose object is an average/median, a few words of a name in between
    # but no number (「平均が1000円を超える」 is a condition on a group's average)
    "derived": "~(平均|中央値)[^、。,.\\d０-９]{0,8}?(より|以上|以下|未満|を超|を上回|を下回)"
    "|~(greater|more|higher|less|lower|bigger|smaller|larger|longer|shorter|older|younger"
    "|[a-z]{3,}er than|above|below|over|under|exceeds?|exceeding)( than)? (the |an? )?"
    "([a-z_]+ ){0,2}(average|mean|median)(?! of)",
    # a judgement asked of the agent: 「続けるべきだと思う？」「どこがいいと思う？」
    "opinion": "~(べき|いい|良い|よい)(だ)?と思(う|います)|~どう思(う|います)"
    "|~(高|安|低|多|少|大き|小さ)い(ほう|方)?(だ|です)?と思(う|います)|業界的に|~相場(的に)?(と比べ|より)"
    "|~should (we|i) (keep|continue|cancel|stop|switch|renew|drop|hire|buy|sell|choose|pick"
    "|go with|stay with)|~do you think (we|i|they) (should|can|could|ought)"
    "|~would you recommend|~in your opinion"
    "|~is it worth|~which (one|\\w+) (is|would be) (better|best)",
    # another file to reconcile with: 「先月のファイルとも突き合わせて」, "against the bank file"
    "other_file": "~(ファイル|シート|ブック|パッケージ|エクセル|excel|csv)(と|とも)[^。?？]{0,12}"
    "(突き?合わせ|突合|照合|照らし合わせ|比較|比べ|マッチ|消し?込)"
    "|~(reconcile|match|compare|cross-?check|tie out|check)[^.?!]{0,40}(?<![a-z])(against|with)"
    " (the |our |another |other |a |last month's |this month's )?([a-z'-]+ ){0,2}"
    "(file|sheet|spreadsheet|workbook|package|export)s?(?![a-z])",
    "ratio": "~(?<![a-z])per (100 |1,?000 |one |each |a )?(km|kms|kilomet(re|er)s?|miles?"
    "|lit(re|er)s?"
    "|gallons?|kg|kgs|kilos?|kilograms?|tons?|tonnes?)(?![a-z])"
    "|~(km|キロ|キロメートル|リットル|kg|トン)(あたり|当たり|につき)",
}
OUT_OF_SCOPE_REASONS: dict[str, tuple[str, str]] = {
    "predict": (
        "将来の予測・予測モデルの構築は対象外です（過去データの集計・可視化・相関は可能です）",
        "forecasting and prediction models are out of scope (summaries, charts and "
        "correlations of the existing data are possible)",
    ),
    "ml": (
        "機械学習モデル（回帰・分類・クラスタリング等）の構築は対象外です",
        "building machine-learning models (regression, classification, clustering) is out of scope",
    ),
    "file": (
        "ファイル出力・メール送信・書類の作成や提出など外部への書き出しは行えません"
        "（結果は画面表示のみ）",
        "writing files, sending e-mail or preparing and submitting documents is not possible "
        "(results are shown on screen only)",
    ),
    "web": (
        "Web検索や外部データの取得は行えません（アップロードされたデータのみ分析します）",
        "web search and external data are not available (only the uploaded data is analysed)",
    ),
    "action": (
        "申請・連絡・解約・支払いなど、データの外での手続きは行えません（データの集計・確認のみ）",
        "actions outside the data (applications, contacting someone, cancelling, paying) are "
        "not possible (only analysis of the uploaded data)",
    ),
    "modify": (
        "データの変更・削除は行えません（読み取りによる分析のみ）",
        "changing or deleting data is not possible (analysis is read-only)",
    ),
    "impute": (
        "欠損値の補完（値を埋めること）には対応していません（欠損の件数・割合の確認は可能です）",
        "filling in missing values is not supported (counting missing values is possible)",
    ),
    "transform": (
        "正規化・標準化など列の変換には対応していません（要約統計や分布の確認は可能です）",
        "normalising or rescaling columns is not supported (summaries and distributions "
        "are possible)",
    ),
    "derived": (
        "平均値など計算した値を条件にした抽出には対応していません（固定の値での条件、"
        "例:「10000以上」は可能です）",
        "conditions on a computed value such as the average are not supported (a fixed "
        "value such as 'over 10000' is possible)",
    ),
    "opinion": (
        "続けるべきか・どこが良いかといった判断や意見は出せません（判断の材料になる集計・比較は可能です）",
        "judgements and opinions (whether to continue, which is better) are not given "
        "(the summaries and comparisons to decide with are possible)",
    ),
    "other_file": (
        "別のファイルとの突き合わせは行えません（読み込んだこの表だけを分析します。"
        "2つの表の照合は業務Plan（突合）で行えます）",
        "reconciling with another file is not possible (only this table is analysed; "
        "matching two tables is done with a business Plan)",
    ),
    "ratio": (
        "「1kmあたり」など2つの列の比率の計算には対応していません（各列の合計・平均は可能です）",
        "a ratio of two columns such as 'per km' is not supported (totals and averages of "
        "each column are possible)",
    ),
}
TOP_N = re.compile(
    r"(?:上位|トップ|ベスト|下位|ワースト|上から|下から|(?<![a-z])(?:top|best|bottom|worst|first|highest|lowest"
    r"|largest|smallest))\s*(\d{1,4})(?!\d)"
)
ASCENDING = re.compile(
    r"下位|ワースト|少ない順|低い順|小さい順|昇順|(?:一番|最も|いちばん|もっとも)少な"
    r"|(?<![a-z])(?:bottom|worst|lowest|smallest|least"
    r"|ascending)(?![a-z])"
)
ROW_NOUNS = re.compile(
    r"注文|取引|受注|レコード|(?<![a-z])(?:orders|transactions|records|rows)(?![a-z])"
)
# Columns that hold a measure: asked about, never swapped for another numeric column.
MEASURE_CONCEPTS = ("sales", "quantity", "unit_price", "discount")
MEASURE_NAME = re.compile(
    r"金額|売上|額|円|単価|価格|数量|amount|sales|revenue|price|cost|quantity", re.IGNORECASE
)
# "the three most common X", 「多い値を上位3つ」: rank the values by how often they occur.
MOST_COMMON = re.compile(
    r"(?<![a-z])(?:most|least) (?:common|frequent|popular|often|frequently)|commonest"
    r"|多い|多く(?!の)|頻出"
    r"|よく(?=[\u3400-\u9fff])"
)
# "the most common room type", "which region is the most common?", 「最も多い区分」: one value,
# not a ranking of several.
MOST_COMMON_ONE = re.compile(
    r"(?<![a-z])the (?:most|least) (?:common|frequent|popular) [a-z_]+(?<!s)(?![a-z_])"
    r"|(?<![a-z])(?:which|what) [a-z_ ]{1,60}?(?<!s) (?:is|was) (?:the )?(?:most|least) "
    r"(?:common|frequent|popular)"
    r"|(?:最も|一番|いちばん)多い"
)
NUMBER_WORDS = {
    w: i + 1
    for i, w in enumerate(
        ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    )
}
TOP_WORDS = re.compile(
    r"(?<![a-z])(\d{1,4}|" + "|".join(NUMBER_WORDS) + r") (?:most|least|top|largest|biggest"
    r"|highest|lowest|smallest)(?![a-z])|(?<![a-z])(?:top|first|bottom) ("
    + "|".join(NUMBER_WORDS)
    + r")(?![a-z])"
)
_NUMBER = r"(\d{1,4}|" + "|".join(NUMBER_WORDS) + ")"
# How many to keep, said with the things counted, when the request ranks: "which 5
# accounts show up most often", 「多い種別を3つ」.
RANKED_COUNT = re.compile(
    rf"(?<![a-z])(?:which|what|the)\s+{_NUMBER}\s+(?=[a-z_])|(?<![\d.])(\d{{1,4}})\s*(?:つ|件|位)"
    r"(?!\s*(?:以上|以下|未満|より|を超|超))"
)
# A piece that only says how many to keep ("top 3 only", 「上位3つだけ」): it belongs to
# the ranking or share next to it, it is nothing asked for on its own.
_TOP_ONLY = re.compile(
    rf"^\W*(?:(?:show|keep|list|just|only|the|please)\s+)*(?:top|bottom|上位|下位|トップ|ワースト)"
    rf"\s*{_NUMBER}\s*(?:only|だけ|のみ|まで|つ|件|位|社|人|名|店|品|個|か国|カ国|ヶ国|拠点|部署|で|に|して|を"
    rf"|表示|please|\s)*\W*$"
)
# Aggregations of a value: "the mean percentage" is a mean, not a share.
VALUE_AGGS = ("mean", "median", "min", "max", "std")
BINS = re.compile(r"(?<!\d)(\d+)\s*(?:bins?|ビン|階級|区間)")
SPEARMAN = re.compile(r"spearman|スピアマン|順位相関")


def _terms(text: str) -> list[str]:
    """Split on ``|`` outside parentheses (raw regex terms may contain groups)."""
    terms, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "|" and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    return [*terms, current]


def _part(term: str) -> str:
    if not term.startswith("~"):
        return term_pattern(term)
    body = term[1:]
    return f"(?<![a-z]){body}" if body[:1].isascii() and body[:1].isalpha() else body


def _compile(table: dict[str, str]) -> dict[str, re.Pattern[str]]:
    return {
        label: re.compile("|".join(sorted(map(_part, _terms(terms)), key=len, reverse=True)))
        for label, terms in table.items()
    }


INTENT_RX = _compile(INTENTS)
AGG_RX = _compile(AGGS)
FREQ_RX = _compile(FREQS)
OUT_OF_SCOPE_RX = _compile(OUT_OF_SCOPE)


# Blanks said to be left out (「空白は除いて」「空欄のは除いて」, "ignore blanks"): a condition on
# the rows, not the missing-values check.
BLANKS_OUT = re.compile(
    r"(?:空欄|空白|未入力|未記入|未登録|ブランク|欠損値?|空)(?:の(?:もの|行|分)?)?\s*(?:は|を)?\s*"
    r"(?:除|外|省|抜)"
    r"|\b(?:leave out|leaving out|exclude|excluding|ignore|ignoring|skip|skipping|drop|dropping"
    r"|without) (?:the |any |all )?(?:blanks?|empty|missing|nulls?)\b",
    re.I,
)
# Blanks said to be kept with the rest (「空欄も含めて」, "including blanks"): with a
# grouping, the blank rows are one more group, not a missing-values check.
BLANKS_IN = re.compile(
    r"(?:空欄|空白|未入力|未記入|ブランク)(?:の(?:もの|行|分)?)?\s*(?:も|を)\s*(?:含め|入れ|一緒|込み)"
    r"|\b(?:including|include|with) (?:the |any )?(?:blanks?|empty ones|missing ones)\b"
    r"|\bblanks? included\b",
    re.I,
)
_GROUPED = re.compile(r"ごと|毎に|別に|別の|\b(?:by|per|for each)\b", re.I)
_WHOLE_DATA = re.compile(r"dataset|the data\b|the file|データ全体|このデータ|ファイル全体", re.I)


# "what % of the total write-off", 「全体に占める」: the share of a total, not a sum beside it
_OF_THE_TOTAL = re.compile(
    r"(?:%|percent(?:age)?|share) of (?:the |our )?total|(?:全体|合計|総額)に占める", re.I
)


def intents(text: str) -> list[str]:
    """Intent labels found in normalised text, in ``INTENTS`` order.

    Blanks said to be left out (``BLANKS_OUT``) ask for no missing-values check.
    A share is not asked for when the text asks for missing values ("percentage of
    missing values") or for a mean, median, ... ("mean humidity percentage").
    """
    found = [label for label, rx in INTENT_RX.items() if rx.search(text)]
    if "missingness" in found and not INTENT_RX["missingness"].search(BLANKS_OUT.sub(" ", text)):
        found.remove("missingness")  # 「空白は除いて集計」: blanks left out, no check asked
    elif "missingness" in found and BLANKS_IN.search(text) and _GROUPED.search(text):
        found.remove("missingness")  # 「原因区分ごとの件数（空欄も含めて）」: blanks as a group
    if "summary" in found and "overview" in found and _WHOLE_DATA.search(text):
        found.remove("summary")  # "summarise the dataset: rows, columns": its overview
    if (
        "share" in found
        and ("missingness" in found or set(VALUE_AGGS) & set(aggregations(text)))
        and not _OF_THE_TOTAL.search(text)
    ):
        found.remove("share")
    return found


def aggregation_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, aggregation) for each aggregation word, in order, longest term winning."""
    claimed = bytearray(len(text))
    found: list[tuple[int, int, str]] = []
    for label, rx in AGG_RX.items():
        for m in rx.finditer(text):
            if m.end() > m.start() and not any(claimed[m.start() : m.end()]):
                claimed[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
                found.append((m.start(), m.end(), label))
    return sorted(found)


def aggregations(text: str) -> list[str]:
    """Aggregations named in the text, in order of appearance (nunique replaces count)."""
    found = list(dict.fromkeys(label for _, _, label in aggregation_spans(text)))
    return [a for a in found if a != "count"] if "nunique" in found else found


def phrase_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every intent and aggregation phrase in the text."""
    spans = [(m.start(), m.end()) for rx in INTENT_RX.values() for m in rx.finditer(text)]
    return spans + [(a, b) for a, b, _ in aggregation_spans(text)]


def frequency(text: str) -> str | None:
    """The time granularity named in the text ("M", "W", "D", "Q", "Y"), or None."""
    hits = [(m.start(), label) for label, rx in FREQ_RX.items() if (m := rx.search(text))]
    return min(hits)[1] if hits else None


# "Please approve all the pending claims", "update the limits in our ERP": an action on
# the records themselves, said with words that may also name a column (approved_amount).
WRITE_BACK = re.compile(
    r"(?<![a-z])(?:approve|reject|update|delete|cancel|register|post|close|reopen|mark|release"
    r"|book|execute)\s+"
    r"(?:all|the|these|those|every|each|them|it)(?![a-z])"
    r"|(?:システム|freee|弥生|奉行|erp|crm)(?:に|へ|上で)[^。?？]{0,20}(?:登録|入力|反映|取り込|計上|更新)",
    re.IGNORECASE,
)


def out_of_scope(text: str) -> list[str]:
    """Out-of-scope categories the text falls in (``OUT_OF_SCOPE`` keys)."""
    return [label for label, rx in OUT_OF_SCOPE_RX.items() if rx.search(text)]


def family(text: str) -> str | None:
    """What a piece of text asks for: "oos", "agg" (aggregation words only), an intent, or None."""
    if out_of_scope(text):
        return "oos"
    if _TOP_ONLY.match(text):
        return None
    found = [
        label
        for label in intents(text)
        if label not in ("ranking", "aggregate", "overview_soft", "scatter_soft")
    ]
    if found:
        return found[0]
    if (
        aggregations(text)
        or INTENT_RX["ranking"].search(text)
        or INTENT_RX["aggregate"].search(text)
    ):
        return "agg"
    return None


# 「Xじゃなくて」「Xの代わりに」, "not X", "instead of X": the column said is not the one meant.
NOT_THIS_AFTER = re.compile(
    r"\s*[\]】」』）)'\"`]?\s*(?:の\s*(?:ほう|方)\s*)?"
    r"(?:の?代わりに|じゃなく|ではなく|でなく|ではない|じゃない)"
)
NOT_THIS_BEFORE = re.compile(
    r"(?<![a-z])(?:not|instead of|rather than|other than|in place of)\s+(?:the\s+)?[\[「『'\"`]?$"
)
