/** The Streamlit app (its 実行 page runs Plans that ask for input). */
export const STREAMLIT_URL = process.env.NEXT_PUBLIC_STREAMLIT_URL ?? "http://localhost:8501";

export const NEEDS_INPUT_TEXT = "入力が必要なため、実行ページで開きます";
