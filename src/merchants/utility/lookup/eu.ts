/**
 * ISO 3166-1 codes of the places where EU law applies: the 27 member states (the United Kingdom left on
 * 2020-02-01) and the parts of them that ISO codes on their own: France's outermost regions (French Guiana,
 * Guadeloupe, Martinique, Mayotte, Réunion, Saint-Martin) and Finland's Åland. Member states' overseas
 * countries and territories (Greenland, the Faroes, New Caledonia, Aruba, Curaçao...) are outside the EU.
 * DB-IP gives no EU flag: `/api/geo`'s `eu` is this table applied to the country DB-IP gives.
 */
const EU_COUNTRIES: ReadonlySet<string> = new Set([
  "AT",
  "BE",
  "BG",
  "CY",
  "CZ",
  "DE",
  "DK",
  "EE",
  "ES",
  "FI",
  "FR",
  "GR",
  "HR",
  "HU",
  "IE",
  "IT",
  "LT",
  "LU",
  "LV",
  "MT",
  "NL",
  "PL",
  "PT",
  "RO",
  "SE",
  "SI",
  "SK",
  // Outermost regions and Åland, coded apart from their state.
  "AX",
  "GF",
  "GP",
  "MF",
  "MQ",
  "RE",
  "YT",
]);

/** Whether EU law applies in the country or territory with this ISO 3166-1 alpha-2 code. */
export function inEu(countryCode: string): boolean {
  return EU_COUNTRIES.has(countryCode);
}
