#!/bin/bash
node run.mjs
