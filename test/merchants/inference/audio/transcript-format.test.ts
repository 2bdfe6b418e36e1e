import { describe, expect, it } from "vitest";
import type { Transcript } from "../../../../src/merchants/inference/audio/engine.ts";
import {
  compressionRatio,
  formatTranscript,
  srtTimestamp,
  vttTimestamp,
} from "../../../../src/merchants/inference/audio/transcript-format.ts";

const transcript: Transcript = {
  language: "english",
  duration: 3725.5,
  text: "the birch canoe slid on the smooth planks glue the sheet --> to the dark blue background",
  segments: [
    { id: 0, start: 0.15, end: 2.9, text: "the birch canoe slid on the smooth planks", avgLogprob: -0.25 },
    { id: 1, start: 3.7, end: 5.2, text: "   " },
    { id: 2, start: 3723.4567, end: 3725.5, text: " glue the sheet --> to the dark blue background" },
  ],
  words: [
    { word: "the", start: 0.15, end: 0.3 },
    { word: "birch", start: 0.3, end: 0.71 },
  ],
};

describe("formatTranscript", () => {
  it("answers json and text as OpenAI does", () => {
    expect(formatTranscript(transcript, "json")).toEqual({
      body: JSON.stringify({ text: transcript.text }),
      contentType: "application/json",
    });
    expect(formatTranscript(transcript, "text")).toEqual({
      body: `${transcript.text}\n`,
      contentType: "text/plain; charset=utf-8",
    });
  });

  it("writes SubRip cues numbered from 1, skipping empty segments, with comma milliseconds", () => {
    const { body, contentType } = formatTranscript(transcript, "srt");
    expect(contentType).toBe("text/plain; charset=utf-8");
    expect(body).toBe(
      "1\n00:00:00,150 --> 00:00:02,900\nthe birch canoe slid on the smooth planks\n\n" +
        "2\n01:02:03,457 --> 01:02:05,500\nglue the sheet -> to the dark blue background\n\n",
    );
  });

  it("writes WebVTT with its header, hours always, dot milliseconds, as text/vtt", () => {
    const { body, contentType } = formatTranscript(transcript, "vtt");
    expect(contentType).toBe("text/vtt; charset=utf-8");
    expect(body).toBe(
      "WEBVTT\n\n" +
        "00:00:00.150 --> 00:00:02.900\nthe birch canoe slid on the smooth planks\n\n" +
        "01:02:03.457 --> 01:02:05.500\nglue the sheet -> to the dark blue background\n\n",
    );
    expect(formatTranscript({ ...transcript, segments: [] }, "vtt").body).toBe("WEBVTT\n\n");
    expect(formatTranscript({ ...transcript, segments: [] }, "srt").body).toBe("");
  });

  it("writes verbose_json with Whisper's ten segment fields: the engine's own, else documented defaults", () => {
    const { body, contentType } = formatTranscript(transcript, "verbose_json");
    expect(contentType).toBe("application/json");
    const json = JSON.parse(body);
    expect(Object.keys(json)).toEqual(["task", "language", "duration", "text", "segments", "words"]);
    expect(json).toMatchObject({
      task: "transcribe",
      language: "english",
      duration: 3725.5,
      text: transcript.text,
    });
    expect(json.segments[0]).toEqual({
      id: 0,
      seek: 15,
      start: 0.15,
      end: 2.9,
      text: "the birch canoe slid on the smooth planks",
      tokens: [],
      temperature: 0,
      avg_logprob: -0.25,
      compression_ratio: compressionRatio("the birch canoe slid on the smooth planks"),
      no_speech_prob: 0,
    });
    expect(json.segments).toHaveLength(3);
    expect(json.words).toEqual(transcript.words);
    const whisper = {
      ...transcript,
      segments: [
        {
          id: 0,
          start: 0,
          end: 4,
          text: " Hello.",
          seek: 0,
          tokens: [50364, 2425, 13],
          temperature: 0.2,
          avgLogprob: -0.31,
          compressionRatio: 0.72,
          noSpeechProb: 0.01,
        },
      ],
      words: undefined,
    };
    const passed = JSON.parse(formatTranscript(whisper, "verbose_json").body);
    expect(passed.segments[0]).toEqual({
      id: 0,
      seek: 0,
      start: 0,
      end: 4,
      text: " Hello.",
      tokens: [50364, 2425, 13],
      temperature: 0.2,
      avg_logprob: -0.31,
      compression_ratio: 0.72,
      no_speech_prob: 0.01,
    });
    expect(passed).not.toHaveProperty("words");
  });
});

describe("timestamps and the compression ratio", () => {
  it("rounds to the millisecond and carries into seconds, minutes and hours", () => {
    expect(srtTimestamp(0)).toBe("00:00:00,000");
    expect(srtTimestamp(1)).toBe("00:00:01,000");
    expect(vttTimestamp(1)).toBe("00:00:01.000");
    expect(vttTimestamp(59.9996)).toBe("00:01:00.000");
    expect(srtTimestamp(36_000 + 62.5)).toBe("10:01:02,500");
    expect(vttTimestamp(-0.2)).toBe("00:00:00.000");
  });

  it("measures repetition as Whisper does: UTF-8 bytes over zlib-compressed bytes", () => {
    // Python's len(t.encode()) / len(zlib.compress(t.encode())) for these two: 240/17 and 44/22.
    expect(compressionRatio("hello ".repeat(40))).toBe(240 / 17);
    expect(compressionRatio(" Thank you. Thank you. Thank you. Thank you.")).toBe(2);
    expect(compressionRatio("the quick brown fox")).toBeLessThan(1);
  });
});
