import type { components } from '../../generated/openapi.js';
import { escapeHtml } from '../core/html.js';
import { textColorFor } from './colors.js';
import type { Label } from './label.entity.js';
import type { LabelRecord } from './labels.service.js';

export type LabelBasicJson = components['schemas']['LabelBasic'];
export type GroupLabelJson = components['schemas']['GroupLabel'];
export type ProjectLabelJson = components['schemas']['ProjectLabel'];

/** A label as other resources embed it (a merge request's labels with details). */
export function presentLabelBasic(label: Label): LabelBasicJson {
  return {
    id: label.id,
    name: label.title,
    color: label.color,
    description: label.description,
    // Labels render their description on one line, as text: nothing in it can become markup.
    description_html: label.description === null ? null : escapeHtml(label.description),
    text_color: textColorFor(label.color) as LabelBasicJson['text_color'],
  };
}

export function presentGroupLabel({ label, counts, subscribed }: LabelRecord): GroupLabelJson {
  return { ...presentLabelBasic(label), ...counts, subscribed };
}

export function presentProjectLabel(record: LabelRecord): ProjectLabelJson {
  return {
    ...presentGroupLabel(record),
    priority: record.priority,
    is_project_label: record.label.projectId !== null,
  };
}
