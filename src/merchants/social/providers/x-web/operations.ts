/**
 * The GraphQL operations of X's web app this provider calls, with their default query ids. X rotates the
 * ids with its web releases (the old ones then answer 404 or `Query: Unspecified`), so every id is
 * configuration (`XWebOptions.queryIds`); these defaults are the ones in `/work/shared/notes/social.md`
 * where it names them, else ones seen in public clients of the web API.
 */

export type Operation =
  | "UserByScreenName"
  | "TweetDetail"
  | "TweetResultByRestId"
  | "TweetResultsByRestIds"
  | "SearchTimeline"
  | "UserTweets"
  | "Followers"
  | "Following"
  | "Retweeters"
  | "ListByRestId"
  | "ListLatestTweetsTimeline"
  | "ListMembers"
  | "ListSubscribers"
  | "CommunityTweetsTimeline"
  | "Viewer";

export const DEFAULT_QUERY_IDS: Readonly<Record<Operation, string>> = {
  UserByScreenName: "AWbeRIdkLtqTRN7yL_H8yw",
  TweetDetail: "YCNdW_ZytXfV9YR3cJK9kw",
  TweetResultByRestId: "4PdbzTmQ5PTjz9RiureISQ",
  SearchTimeline: "ML-n2SfAxx5S_9QMqNejbg",
  Followers: "P7m4Qr-rJEB8KUluOenU6A",
  Following: "T5wihsMTYHncY7BB4YxHSg",
  ListLatestTweetsTimeline: "Uv3buKIUElzL3Iuc0L0O5g",
  UserTweets: "N2tFDY-MlrLxXJ9F_ZxJGA",
  // Not in the notes: ids seen in public clients; check them against x.com's main.js before relying on them.
  TweetResultsByRestIds: "Ajr5RqgcgUFQXMjdp-AJMg",
  Retweeters: "i-CI8t2pJD15euZJErEDrg",
  ListByRestId: "Tzkkg-NaBi_y1aAUUb6_eQ",
  ListMembers: "BQp2IEYkgxuSxqbTAr1e1g",
  ListSubscribers: "0mu9dJZ5pCO1HpYd8HEV3g",
  CommunityTweetsTimeline: "-Bw8jN-_Ra0HRRmSVu8ssw",
  Viewer: "-876iyxD1O_0X0BqeykjZA",
};

/**
 * The public bearer token X's web app ships in its JavaScript (the same for everyone; the session is in
 * the cookies).
 */
export const WEB_BEARER_TOKEN =
  "AAAAAAAAAAAAAAAAAAAAANRILgAAAAAAnNwIzUejRCOuH5E6I8xnZz4puTs%3D1Zv7ttfk8LF81IUq16cHjhLTvJu4FA33AGWWjCpTnA";

/**
 * The feature switches the web app sends with its timeline and tweet queries: the defaults, each one
 * replaceable by configuration (`featureSets`). X answers 400 naming a switch it requires and did not get;
 * unknown extra ones are ignored.
 */
export const TWEET_FEATURES: Readonly<Record<string, boolean>> = {
  rweb_video_screen_enabled: false,
  profile_label_improvements_pcf_label_in_post_enabled: true,
  rweb_tipjar_consumption_enabled: true,
  verified_phone_label_enabled: false,
  creator_subscriptions_tweet_preview_api_enabled: true,
  responsive_web_graphql_timeline_navigation_enabled: true,
  responsive_web_graphql_skip_user_profile_image_extensions_enabled: false,
  premium_content_api_read_enabled: false,
  communities_web_enable_tweet_community_results_fetch: true,
  c9s_tweet_anatomy_moderator_badge_enabled: true,
  responsive_web_grok_analyze_button_fetch_trends_enabled: false,
  responsive_web_grok_analyze_post_followups_enabled: true,
  responsive_web_jetfuel_frame: false,
  responsive_web_grok_share_attachment_enabled: true,
  articles_preview_enabled: true,
  responsive_web_edit_tweet_api_enabled: true,
  graphql_is_translatable_rweb_tweet_is_translatable_enabled: true,
  view_counts_everywhere_api_enabled: true,
  longform_notetweets_consumption_enabled: true,
  responsive_web_twitter_article_tweet_consumption_enabled: true,
  tweet_awards_web_tipping_enabled: false,
  responsive_web_grok_show_grok_translated_post: false,
  responsive_web_grok_analysis_button_from_backend: true,
  creator_subscriptions_quote_tweet_preview_enabled: false,
  freedom_of_speech_not_reach_fetch_enabled: true,
  standardized_nudges_misinfo: true,
  tweet_with_visibility_results_prefer_gql_limited_actions_policy_enabled: true,
  longform_notetweets_rich_text_read_enabled: true,
  longform_notetweets_inline_media_enabled: true,
  responsive_web_grok_image_annotation_enabled: true,
  responsive_web_enhance_cards_enabled: false,
};

export const USER_FEATURES: Readonly<Record<string, boolean>> = {
  hidden_profile_subscriptions_enabled: true,
  profile_label_improvements_pcf_label_in_post_enabled: true,
  rweb_tipjar_consumption_enabled: true,
  verified_phone_label_enabled: false,
  subscriptions_verification_info_is_identity_verified_enabled: true,
  subscriptions_verification_info_verified_since_enabled: true,
  highlights_tweets_tab_ui_enabled: true,
  responsive_web_twitter_article_notes_tab_enabled: true,
  subscriptions_feature_can_gift_premium: true,
  creator_subscriptions_tweet_preview_api_enabled: true,
  responsive_web_graphql_skip_user_profile_image_extensions_enabled: false,
  responsive_web_graphql_timeline_navigation_enabled: true,
};

/** Every switch the web app sends: the names `X402M_SOCIAL_X_FEATURES` may set. */
export const FEATURE_SWITCHES: ReadonlySet<string> = new Set([
  ...Object.keys(TWEET_FEATURES),
  ...Object.keys(USER_FEATURES),
]);

/** The two sets of switches as sent: the tweet queries' and the user lookups'. */
export interface FeatureSets {
  tweet: Readonly<Record<string, boolean>>;
  user: Readonly<Record<string, boolean>>;
}

/**
 * The switches with the operator's values (`X402M_SOCIAL_X_FEATURES`) in place of the defaults, in every
 * set that sends them: X's web release can flip what a switch must be, and the fix is then a setting, not a
 * release of this service. A name neither set sends is left out (the configuration refuses it).
 */
export function featureSets(overrides: Readonly<Record<string, boolean>> = {}): FeatureSets {
  const apply = (defaults: Readonly<Record<string, boolean>>) =>
    Object.fromEntries(Object.entries(defaults).map(([name, on]) => [name, overrides[name] ?? on]));
  return { tweet: apply(TWEET_FEATURES), user: apply(USER_FEATURES) };
}

/** The switches an operation sends: the user lookups take the user set, the rest the tweet set. */
export function featuresOf(operation: Operation, sets: FeatureSets): Readonly<Record<string, boolean>> {
  return operation === "UserByScreenName" || operation === "Viewer" ? sets.user : sets.tweet;
}

export function fieldTogglesOf(operation: Operation): Readonly<Record<string, boolean>> | undefined {
  switch (operation) {
    case "UserByScreenName":
      return { withAuxiliaryUserLabels: false };
    case "TweetResultByRestId":
    case "TweetResultsByRestIds":
    case "TweetDetail":
      return {
        withArticleRichContentState: true,
        withArticlePlainText: false,
        withGrokAnalyze: false,
        withDisallowedReplyControls: false,
      };
    default:
      return undefined;
  }
}
